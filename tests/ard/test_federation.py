"""Federated search against peer registries that are real HTTP servers on loopback."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from django.test import Client

from cards.models import Agent
from tests.support import Reply, running_server

pytestmark = pytest.mark.django_db

PEER_RESULT = {
    "identifier": "urn:air:peer.example:a2a:storm-chaser",
    "displayName": "Storm Chaser",
    "type": "application/a2a-agent-card+json",
    "url": "https://peer.example/storm.json",
    "score": 99,
}


def _search(client: Client, mode: str) -> Any:
    body = {"query": {"text": "weather forecast"}, "federation": mode, "pageSize": 5}
    return client.post("/ard/search", json.dumps(body), content_type="application/json")


def test_none_and_referrals(client: Client, demo: dict[str, Agent], settings: Any) -> None:
    settings.REGISTRY_ARD_PEERS = ["https://finder.peer.example/ard/"]
    none = _search(client, "none").json()
    assert "referrals" not in none and all(
        r["source"] == "http://testserver/ard/" for r in none["results"]
    )
    referrals = _search(client, "referrals").json()["referrals"]
    assert referrals == [
        {
            "identifier": "urn:air:finder.peer.example:registry:peer",
            "displayName": "Agent registry at finder.peer.example",
            "type": "application/ai-registry+json",
            "url": "https://finder.peer.example/ard/",
        }
    ]


def test_auto_merges_peers_within_the_deadline(
    client: Client, demo: dict[str, Agent], settings: Any, loopback_allowed: None
) -> None:
    def slow(handler: BaseHTTPRequestHandler) -> Reply:
        time.sleep(3)
        return Reply(
            body=json.dumps(
                {"results": [dict(PEER_RESULT, identifier="urn:air:slow.example:a2a:late")]}
            ).encode()
        )

    with running_server() as good, running_server() as late, running_server() as broken:
        good.serve(
            "/ard/search", json.dumps({"results": [PEER_RESULT, {"identifier": "junk"}]}).encode()
        )
        late.routes["/ard/search"] = slow
        broken.serve("/ard/search", b"<html>oops</html>", content_type="text/html")
        settings.REGISTRY_ARD_PEERS = [good.url("/ard/"), late.url("/ard/"), broken.url("/ard/")]
        settings.REGISTRY_ARD_FEDERATION_TIMEOUT = 0.8
        started = time.monotonic()
        results = _search(client, "auto").json()["results"]
        assert time.monotonic() - started < 2.5
        sent = json.loads(good.bodies[0])
        assert sent["federation"] == "none" and sent["query"]["text"] == "weather forecast"
    identifiers = [r["identifier"] for r in results]
    assert (
        PEER_RESULT["identifier"] in identifiers
        and "urn:air:slow.example:a2a:late" not in identifiers
    )
    peer = next(r for r in results if r["identifier"] == PEER_RESULT["identifier"])
    assert peer["source"] == good.url("/ard/")
    # Merged by score, ours first on a tie: the peer's 99 goes before every result of ours below.
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    place = identifiers.index(PEER_RESULT["identifier"])
    assert all(r["score"] >= 99 for r in results[:place])
    assert demo["weather"].ard_identifier in identifiers
    assert "junk" not in identifiers


def test_peer_results_are_checked_like_our_own(
    client: Client, demo: dict[str, Agent], settings: Any, loopback_allowed: None
) -> None:
    """A peer's results pass the checks our own projections meet; what fails is dropped (an
    unusable result) or left out (an optional member), and unknown members never pass."""
    good = dict(
        PEER_RESULT,
        identifier="urn:air:peer.example:a2a:fine",
        description="Forecasts\nfor storms.",
        tags=["weather"],
        metadata={"health": "healthy", "n": 2},
        updatedAt="2026-01-01T00:00:00Z",
        source="https://upstream.example/ard/",
    )
    cases = {
        "javascript": dict(PEER_RESULT, url="javascript:alert(1)"),
        "data-url": dict(PEER_RESULT, url="data:text/html,<script>alert(1)</script>"),
        "relative": dict(PEER_RESULT, url="/storm.json"),
        "no-host": dict(PEER_RESULT, url="https:///storm.json"),
        "spaces": dict(PEER_RESULT, url="https://peer.example/a b"),
        "long-url": dict(PEER_RESULT, url="https://peer.example/" + "a" * 3000),
        "markup": dict(PEER_RESULT, displayName="<img src=x onerror=alert(1)>"),
        "control": dict(PEER_RESULT, displayName="Storm\u0000Chaser"),
        "long-name": dict(PEER_RESULT, displayName="S" * 600),
        "name-type": dict(PEER_RESULT, displayName=["Storm"]),
        "bad-type": dict(PEER_RESULT, type="text/html; <b>"),
        "score": dict(PEER_RESULT, score="99"),
        "both": dict(PEER_RESULT, data={"name": "x"}),
        "inline-type": {**{k: v for k, v in PEER_RESULT.items() if k != "url"}, "data": "x"},
    }
    for number, (label, case) in enumerate(cases.items()):
        case["identifier"] = f"urn:air:peer.example:a2a:bad-{number}-{label}"
    junk = dict(
        PEER_RESULT,
        identifier="urn:air:peer.example:a2a:partly",
        description=["not", "text"],
        tags=["ok", {"no": 1}],
        metadata={"nested": {"x": 1}},
        updatedAt="2026-02-30T00:00:00Z",
        source="javascript:alert(1)",
        onclick="alert(1)",
    )
    with running_server() as peer:
        answer = {"results": [good, junk, *cases.values()]}
        peer.serve("/ard/search", json.dumps(answer).encode())
        settings.REGISTRY_ARD_PEERS = [peer.url("/ard/")]
        results = _search(client, "auto").json()["results"]
    by_id = {r["identifier"]: r for r in results}
    assert not [i for i in by_id if ":bad-" in i], by_id.keys()
    fine = by_id["urn:air:peer.example:a2a:fine"]
    assert fine["description"] == "Forecasts\nfor storms." and fine["tags"] == ["weather"]
    assert fine["metadata"] == {"health": "healthy", "n": 2}
    assert fine["source"] == "https://upstream.example/ard/" and fine["url"] == PEER_RESULT["url"]
    partly = by_id["urn:air:peer.example:a2a:partly"]
    assert set(partly) == {"identifier", "displayName", "type", "url", "score", "source"}
    assert partly["source"] == peer.url("/ard/")
    assert demo["weather"].ard_identifier in by_id

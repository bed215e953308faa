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
    assert peer["source"] == good.url("/ard/") and identifiers[0] == PEER_RESULT["identifier"]
    assert demo["weather"].ard_identifier in identifiers
    assert "junk" not in identifiers

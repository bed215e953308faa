"""Another spelling of a URL is the same URL at the ARD doors: manifest entries and federation
(issue 35, item 2). Real servers on loopback, two real accounts through the v1 API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from cards.models import Agent, Manifest
from cards.tasks import crawl_agent
from tests.api.test_url_spellings import account
from tests.ard.conftest import card
from tests.support import CardServer, Reply, running_server

pytestmark = pytest.mark.django_db

CARD = "/cards/bravo.json"


def _submit(client: APIClient, url: str) -> Agent:
    response = client.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code in (200, 202), response.content
    crawl_agent.apply(args=[response.json()["id"]]).get()
    return Agent.objects.get(pk=response.json()["id"])


def _entry(n: int, url: str) -> dict[str, Any]:
    return {
        "identifier": f"urn:air:127.0.0.1:a2a:bravo-{n}",
        "displayName": f"Bravo {n}",
        "type": "application/a2a-agent-card+json",
        "url": url,
        "representativeQueries": ["one question", "another question"],
    }


def _publish(server: CardServer, urls: list[str]) -> None:
    entries = [_entry(n, url) for n, url in enumerate(urls)]
    body = {"specVersion": "1.0", "host": {"displayName": "Bob"}, "entries": entries}
    server.serve("/.well-known/ard.json", json.dumps(body).encode())


def _card_body(name: str) -> bytes:
    return card(name, f"{name} answers", [{"id": "s", "name": "S", "description": "d",
                                          "tags": ["t"]}])  # fmt: skip


def test_manifest_entries_in_several_spellings_make_one_agent(loopback_allowed: None) -> None:
    """The issue's manifest: one card listed as /./, //, %63ard.json, card.json/ and with the
    host's trailing dot made 5 more agents for Bob. One agent now; the repeats are reported."""
    bob = account("bob")
    with running_server() as server:
        server.serve(CARD, _card_body("Bravo"))
        host = f"http://{server.host}.:{server.port}"
        _publish(server, [
            server.url(CARD),
            server.url("/cards/./bravo.json"),
            server.url("/cards//bravo.json"),
            server.url("/cards/br%61vo.json"),
            server.url(CARD + "/"),
            host + CARD,
        ])  # fmt: skip
        origin = _submit(bob, server.origin)
    manifest = Manifest.objects.get()
    listed = Agent.objects.filter(manifest=manifest).exclude(pk=origin.pk)
    assert [agent.url for agent in listed] == [server.url(CARD)]
    repeated = [f["pointer"] for f in manifest.findings if f["code"] == "ard.entry-repeated"]
    assert repeated == [f"/entries/{n}" for n in range(1, 6)], manifest.findings


def test_a_manifest_entry_spelling_another_accounts_url_is_refused(
    loopback_allowed: None,
) -> None:
    """Shared hosting: Alice's rejected card is on the origin whose manifest Bob publishes, and
    Bob lists it in another spelling, or lists the card Alice's agent was redirected to."""
    alice, bob = account("alice"), account("bob")
    with running_server() as server, running_server("127.0.0.2") as alices:
        server.serve("/alice/card.json", _card_body("Alpha"))
        server.serve("/alice/moved.json", _card_body("Moved"))
        alices.routes["/old.json"] = Reply(
            status=301, headers={"Location": server.url("/alice/moved.json")}
        )
        mine = _submit(alice, server.url("/alice/card.json"))
        moved = _submit(alice, alices.url("/old.json"))
        assert moved.card_url == server.url("/alice/moved.json")
        Agent.objects.filter(pk=mine.pk).update(moderation="rejected")
        _publish(server, [server.url("/alice/./card.json"), server.url("/alice/moved.json/")])
        _submit(bob, server.origin)
    manifest = Manifest.objects.get()
    refused = [f["pointer"] for f in manifest.findings if f["code"] == "ard.entry-owner"]
    assert refused == ["/entries/0", "/entries/1"], manifest.findings
    assert not Agent.objects.filter(manifest=manifest, manifest_listed=True).exists()
    assert Agent.objects.filter(submitted_by=bob.user).count() == 1  # type: ignore[attr-defined]  # his origin


PEER_COPY = {
    "identifier": "urn:air:peer.example:a2a:weather-copy",
    "displayName": "Weather (a copy)",
    "type": "application/a2a-agent-card+json",
    # Our demo weather agent's card URL, spelled another way.
    "url": "HTTPS://Weather.demo.example.:443/.well-known/./agent-card.json",
    "score": 100,
}


def test_a_peer_result_naming_our_agent_in_another_spelling_is_not_repeated(
    client: Client, demo: dict[str, Agent], settings: Any, loopback_allowed: None
) -> None:
    other = dict(PEER_COPY, identifier="urn:air:peer.example:a2a:other",
                 url="https://peer.example/other.json")  # fmt: skip
    with running_server() as peer:
        peer.serve("/ard/search", json.dumps({"results": [PEER_COPY, other]}).encode())
        settings.REGISTRY_ARD_PEERS = [peer.url("/ard/"), peer.url("/ard/./")]
        body = {"query": {"text": "weather forecast"}, "federation": "auto", "pageSize": 5}
        results = client.post(
            "/ard/search", json.dumps(body), content_type="application/json"
        ).json()["results"]
        assert len(peer.bodies) == 1  # one peer, spelled twice in the settings
    identifiers = [r["identifier"] for r in results]
    assert demo["weather"].ard_identifier in identifiers
    assert PEER_COPY["identifier"] not in identifiers
    assert "urn:air:peer.example:a2a:other" in identifiers

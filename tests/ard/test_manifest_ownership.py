"""Manifests and ownership, two real accounts against each other (issue 17, items 2 and 4).

Alice registers her agent; Bob publishes a manifest that lists it. Bob's manifest must not bind
to, change or delist Alice's agent, whether the card is on another host (no authority) or on
Bob's own origin (another account's agent). Everything goes through the v1 API with tokens and
the crawl task, on real HTTP servers on loopback (Alice's on 127.0.0.2, Bob's on 127.0.0.1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import manifest_crawling
from cards.ard.manifest import url_authority
from cards.models import Agent, AgentEvent, Manifest
from cards.tasks import crawl_agent
from tests.ard.conftest import card
from tests.support import CardServer, running_server

pytestmark = pytest.mark.django_db(transaction=False)


def _card(name: str) -> bytes:
    skill = {"id": name.lower(), "name": name, "description": "d", "tags": ["own-tag"]}
    return card(name, f"{name} answers questions", [skill])


def _account(name: str) -> APIClient:
    user = get_user_model().objects.create_user(username=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user  # type: ignore[attr-defined]
    return client


def _submit(client: APIClient, url: str) -> Agent:
    """Submit through the API with the account's token and run the crawl task (eager)."""
    response = client.post("/api/v1/agents", {"url": url}, format="json")
    assert response.status_code in (200, 201, 202), response.content
    agent_id = response.json()["id"]
    crawl_agent.apply(args=[agent_id]).get()
    return Agent.objects.get(pk=agent_id)


def _recrawl(agent: Agent) -> None:
    crawl_agent.apply(args=[str(agent.pk)]).get()


def _entry(name: str, url: str, host: str = "127.0.0.1") -> dict[str, Any]:
    return {
        "identifier": f"urn:air:{host}:a2a:{name.lower()}",
        "displayName": name,
        "type": "application/a2a-agent-card+json",
        "url": url,
        "tags": ["bobs-tag"],
        "representativeQueries": ["bob's special query", "find bob's thing"],
        "trustManifest": {"identity": "https://bob.example"},
    }


def _publish(server: CardServer, entries: list[dict[str, Any]]) -> None:
    body = {"specVersion": "1.0", "host": {"displayName": "Bob"}, "entries": entries}
    server.serve("/.well-known/ard.json", json.dumps(body).encode())


@pytest.fixture
def alice_server() -> Iterator[CardServer]:
    with running_server("127.0.0.2") as server:
        yield server


@pytest.fixture
def alice() -> APIClient:
    return _account("alice")


@pytest.fixture
def bob() -> APIClient:
    return _account("bob")


def _untouched(agent: Agent) -> Agent:
    agent = Agent.objects.get(pk=agent.pk)
    assert agent.manifest_id is None and agent.manifest_listed is None
    assert agent.ard_entry == {} and agent.capabilities == ["alpha"]  # its card's skill id
    assert "bobs-tag" not in agent.tags and "bob's special query" not in agent.search_text
    assert agent.submitted_by_id is not None
    return agent


def _listed(client: APIClient, agent: Agent) -> bool:
    items = client.get("/ard/agents", {"pageSize": 100}).json()["items"]
    return agent.ard_identifier in {item["identifier"] for item in items}


def _untouched_and_listed(agent: Agent) -> None:
    """Nothing of the manifest's stuck to ``agent``: it is listed, with no history entry."""
    agent = _untouched(agent)
    assert _listed(APIClient(), agent)
    assert not AgentEvent.objects.filter(agent=agent).exists()


def test_a_manifest_on_another_host_cannot_take_over_an_agent(
    alice: APIClient,
    bob: APIClient,
    alice_server: CardServer,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    alice_url = alice_server.serve("/cards/alpha.json", _card("Alpha"))
    mine = _submit(alice, alice_url)
    assert mine.status == "ok" and mine.submitted_by_id == alice.user.pk  # type: ignore[attr-defined]
    bob_url = card_server.serve("/cards/bravo.json", _card("Bravo"))
    _publish(card_server, [_entry("Alpha", alice_url), _entry("Bravo", bob_url)])
    origin = _submit(bob, card_server.origin)
    assert origin.status == "ok" and origin.shape == "ard-manifest"
    manifest = Manifest.objects.get()
    refused = [f for f in manifest.findings if f["code"] == "ard.entry-authority"]
    assert [f["pointer"] for f in refused] == ["/entries/0/url"]
    # Bob sees the refusal on his origin's page; Alice's detail does not carry it.
    shown = bob.get(f"/api/v1/agents/{origin.pk}").json()["validation"]["findings"]
    assert "ard.entry-authority" in {f["code"] for f in shown}
    _untouched(mine)
    # Bob's own entry is his: created by the crawl, owned by his account (item 4).
    bravo = Agent.objects.get(url=bob_url)
    assert bravo.submitted_by_id == bob.user.pk and bravo.manifest_id == manifest.pk  # type: ignore[attr-defined]
    assert "bobs-tag" in bravo.tags
    tagged = alice.get("/ard/agents", {"filter": "tags = 'bobs-tag'"}).json()["items"]
    assert [item["identifier"] for item in tagged] == [bravo.ard_identifier]
    # Bob drops the entry and re-crawls: Alice's agent is still listed, with no history entry.
    _publish(card_server, [_entry("Bravo", bob_url)])
    _recrawl(origin)
    _untouched_and_listed(mine)


def test_a_manifest_cannot_take_over_another_accounts_agent_on_its_own_origin(
    alice: APIClient, bob: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    """Shared hosting: Alice's card is on the origin whose manifest Bob publishes."""
    alice_url = card_server.serve("/alice/alpha.json", _card("Alpha"))
    mine = _submit(alice, alice_url)
    _publish(card_server, [_entry("Alpha", alice_url)])
    _submit(bob, card_server.origin)
    manifest = Manifest.objects.get()
    assert [f["code"] for f in manifest.findings if f["severity"] == "error"] == ["ard.entry-owner"]
    mine = _untouched(mine)
    assert mine.ard_identifier_source == "derived"  # not the identifier Bob's entry names
    _publish(card_server, [])
    _recrawl(Agent.objects.get(url=card_server.origin))
    assert _listed(APIClient(), _untouched(mine))


def test_bobs_own_agent_is_bound_and_delisted_by_his_manifest(
    bob: APIClient, card_server: CardServer, loopback_allowed: None
) -> None:
    own_url = card_server.serve("/cards/bravo.json", _card("Bravo"))
    own = _submit(bob, own_url)
    _publish(card_server, [_entry("Bravo", own_url)])
    origin = _submit(bob, card_server.origin)
    own.refresh_from_db()
    assert own.manifest_id is not None and own.manifest_listed is True
    assert "bobs-tag" in own.tags
    _publish(card_server, [])
    _recrawl(origin)
    own.refresh_from_db()
    assert own.manifest_listed is False
    assert AgentEvent.objects.filter(agent=own, kind="manifest-entry-removed").exists()


def test_linking_to_another_accounts_manifest_changes_none_of_its_agents(
    alice: APIClient,
    bob: APIClient,
    alice_server: CardServer,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    """Bob's home page points rel="ard" at Alice's manifest: Bob's crawl reads it with his
    account, and neither binds nor delists Alice's agents."""
    alice_url = alice_server.serve("/cards/alpha.json", _card("Alpha"))
    alice_server.serve(
        "/catalog.json",
        json.dumps({"entries": [_entry("Alpha", alice_url, "127.0.0.2")]}).encode(),
    )
    alice_server.serve("/", b'<link rel="ard" href="/catalog.json">', content_type="text/html")
    _submit(alice, alice_server.origin)
    mine = Agent.objects.get(url=alice_url)
    assert mine.manifest_listed is True and mine.submitted_by_id == alice.user.pk  # type: ignore[attr-defined]
    card_server.serve(
        "/", f'<link rel="ard" href="{alice_server.url("/catalog.json")}">'.encode(),
        content_type="text/html",
    )  # fmt: skip
    _submit(bob, card_server.origin)
    mine.refresh_from_db()
    assert mine.manifest_listed is True and "bobs-tag" in mine.tags  # Alice's own entry's tags
    assert mine.submitted_by_id == alice.user.pk  # type: ignore[attr-defined]
    assert not AgentEvent.objects.filter(agent=mine).exists()


def test_an_agent_bound_before_the_check_is_released_not_delisted(
    alice: APIClient,
    bob: APIClient,
    alice_server: CardServer,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    """Rows taken over before this fix: Bob's next crawl gives Alice's agent back, listed."""
    alice_url = alice_server.serve("/cards/alpha.json", _card("Alpha"))
    mine = _submit(alice, alice_url)
    bob_url = card_server.serve("/cards/bravo.json", _card("Bravo"))
    _publish(card_server, [_entry("Bravo", bob_url)])
    origin = _submit(bob, card_server.origin)
    manifest = Manifest.objects.get()
    Agent.objects.filter(pk=mine.pk).update(
        manifest=manifest, manifest_listed=True, ard_entry={"tags": ["bobs-tag"]}
    )
    _publish(card_server, [_entry("Alpha", alice_url), _entry("Bravo", bob_url)])
    _recrawl(origin)
    _untouched_and_listed(mine)


def test_manifest_entries_go_through_moderation_like_submissions(
    bob: APIClient, card_server: CardServer, loopback_allowed: None, settings: Any
) -> None:
    settings.REGISTRY_AUTO_APPROVE = False
    bob_url = card_server.serve("/cards/bravo.json", _card("Bravo"))
    _publish(card_server, [_entry("Bravo", bob_url)])
    _submit(bob, card_server.origin)
    bravo = Agent.objects.get(url=bob_url)
    assert bravo.moderation == Agent.Moderation.PENDING
    assert not _listed(APIClient(), bravo)


def test_a_manifest_that_cannot_be_processed_is_recorded_on_the_origin(
    bob: APIClient, card_server: CardServer, loopback_allowed: None, monkeypatch: Any
) -> None:
    """Whatever goes wrong while storing a manifest lands on the origin as its error, not a
    crawl that leaves it pending with nothing said (the ValueError of issue 17 item 4)."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError('Cannot assign "2": "Agent.submitted_by" must be a "User" instance.')

    monkeypatch.setattr(manifest_crawling, "ingest", broken)
    _publish(card_server, [_entry("Bravo", card_server.url("/cards/bravo.json"))])
    origin = _submit(bob, card_server.origin)
    assert origin.status == "error" and "could not be processed" in origin.last_error
    assert origin.last_error_code == "ard.manifest" and origin.shape != "ard-manifest"
    assert origin.last_crawled_at is not None and origin.attempts.exists()


@pytest.mark.parametrize(
    ("card_url", "allowed"),
    [
        ("https://example.com/a.json", True),
        ("https://agents.example.com/a.json", True),
        ("https://a.b.example.com/a.json", True),
        ("https://EXAMPLE.com./a.json", True),
        ("https://example.org/a.json", False),
        ("https://evilexample.com/a.json", False),
        ("https://com/a.json", False),
        ("http://example.com/a.json", False),
        ("https://example.com:8443/a.json", False),
        ("https://127.0.0.1/a.json", False),
    ],
)
def test_url_authority(card_url: str, allowed: bool) -> None:
    assert url_authority("https://example.com/.well-known/ard.json", card_url) is allowed
    assert url_authority("http://127.0.0.1:8080/ard.json", "http://127.0.0.1:8080/c") is True
    assert url_authority("http://127.0.0.1:8080/ard.json", "http://127.0.0.1:8081/c") is False
    assert url_authority("http://127.0.0.1/ard.json", "http://1.127.0.0.1/c") is False

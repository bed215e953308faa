"""A manifest that could not be read for a moment (issue 39 item 11): the agent is not kept
nameless meanwhile, and the manifest is found, and the agent bound to it, on a later crawl.

A real server on loopback answers ``/.well-known/ard.json`` with a 500 (or a timeout) on the
first crawl and with a manifest on the next; the origin's card is at the well-known card path.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.crawling import agent_crawl
from cards.crawling.manifests import STAND_IN
from cards.models import Agent, AgentEvent, Manifest
from cards.services import agent_submit
from tests.ard.conftest import card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db(transaction=False)

ARD = "/.well-known/ard.json"
CARD = "/.well-known/agent-card.json"
IDENTIFIER = "urn:air:127.0.0.1:a2a:storefront"


def _card(name: str) -> bytes:
    return card(name, f"{name} helps", [{"id": "help", "name": "Help", "description": "d"}])


def _manifest(server: CardServer, *paths: str) -> bytes:
    entries = [
        {
            "identifier": IDENTIFIER if path == CARD else f"urn:air:127.0.0.1:a2a:{index}",
            "displayName": "Storefront" if path == CARD else f"Entry {index}",
            "type": "application/a2a-agent-card+json",
            "url": server.url(path),
            "representativeQueries": ["sell me a lamp", "what is in stock"],
            "tags": ["shop"],
        }
        for index, path in enumerate(paths)
    ]
    return json.dumps({"specVersion": "1.0", "entries": entries}).encode()


def _slow(handler: Any) -> Reply:
    time.sleep(1.5)
    return Reply(status=404, body=b"")


FIRST = {"500": Reply(status=500, body=b"oops"), "timeout": _slow}


def _listed(agent: Agent) -> bool:
    rows = APIClient().get("/api/v1/agents", {"limit": 100}).json()["results"]
    return str(agent.pk) in {row["id"] for row in rows}


@pytest.mark.parametrize("first", FIRST)
def test_the_card_is_read_at_once_and_the_agent_bound_when_the_manifest_appears(
    first: str, card_server: CardServer, loopback_allowed: None, user: Any, settings: Any
) -> None:
    settings.REGISTRY_FETCH_READ_TIMEOUT = 0.5
    card_server.routes[ARD] = FIRST[first]
    card_server.serve(CARD, _card("Storefront"))
    origin, _ = agent_submit(url=card_server.origin, user=user, enqueue=False)

    assert agent_crawl(agent_id=origin.pk) == "stored"
    origin.refresh_from_db()
    assert origin.status == "ok" and origin.name == "Storefront", origin.last_error
    assert origin.manifest_id is None and not Manifest.objects.exists()
    assert _listed(origin)
    derived = origin.ard_identifier
    assert derived

    # The manifest is there on the next crawl, and lists the card the origin was read from.
    card_server.serve(ARD, _manifest(card_server, CARD))
    assert agent_crawl(agent_id=origin.pk) == "unchanged"
    origin.refresh_from_db()
    manifest = Manifest.objects.get()
    assert manifest.status == "ok"
    assert origin.manifest_id == manifest.pk and origin.manifest_listed is True
    assert origin.ard_entry["manifestUrl"] == manifest.url
    assert origin.ard_entry["representativeQueries"] == ["sell me a lamp", "what is in stock"]
    # Still the same agent, with its card, its name, its place in the catalogue and its id.
    assert origin.shape != STAND_IN and origin.name == "Storefront" and origin.status == "ok"
    assert origin.moderation == Agent.Moderation.APPROVED and not origin.moderation_reason
    assert origin.ard_identifier == derived  # identifiers are stable (docs/ard.md)
    assert Agent.objects.count() == 1  # no second agent for the same card
    assert card_server.hits(CARD) == 2 and card_server.hits(ARD) == 2
    assert _listed(origin)
    detail = APIClient().get(f"/api/v1/agents/{origin.pk}").json()
    assert detail["ard"]["manifest_url"] == manifest.url and detail["ard"]["listed"] is True

    # Later crawls read both: the manifest and the bound agent's card.
    assert agent_crawl(agent_id=origin.pk) == "unchanged"
    assert card_server.hits(CARD) == 3 and card_server.hits(ARD) == 3
    origin.refresh_from_db()
    assert origin.manifest_id == manifest.pk and origin.manifest_listed is True


def test_a_manifest_that_appears_without_the_origins_card_makes_it_the_stand_in(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    """The manifest lists other agents only: as for an origin that starts publishing one, its
    entries become agents and the origin's row stands for the manifest."""
    card_server.serve(ARD, b"oops", status=503, content_type="text/plain")
    card_server.serve(CARD, _card("Storefront"))
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    origin, _ = agent_submit(url=card_server.origin, user=user, enqueue=False)
    assert agent_crawl(agent_id=origin.pk) == "stored"

    card_server.serve(ARD, _manifest(card_server, "/cards/alpha.json"))
    assert agent_crawl(agent_id=origin.pk) == "manifest"
    origin.refresh_from_db()
    assert origin.shape == STAND_IN and origin.moderation == Agent.Moderation.HIDDEN
    alpha = Agent.objects.get(url=card_server.url("/cards/alpha.json"))
    assert alpha.manifest_id == origin.manifest_id and alpha.submitted_by == user


def test_a_bound_origin_keeps_its_card_while_its_manifest_fails_for_a_moment(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    """Once bound, a 500 at ard.json neither withdraws the manifest nor delists the agent (a
    failure to fetch is no evidence), and the card is still read."""
    card_server.serve(ARD, b"oops", status=500, content_type="text/plain")
    card_server.serve(CARD, _card("Storefront"))
    origin, _ = agent_submit(url=card_server.origin, user=user, enqueue=False)
    assert agent_crawl(agent_id=origin.pk) == "stored"
    card_server.serve(ARD, _manifest(card_server, CARD))
    assert agent_crawl(agent_id=origin.pk) == "unchanged"
    card_server.serve(ARD, b"oops", status=500, content_type="text/plain")
    assert agent_crawl(agent_id=origin.pk) == "unchanged"
    assert card_server.hits(CARD) == 3
    origin.refresh_from_db()
    assert origin.manifest_listed is True and origin.manifest_id is not None
    assert origin.status == "ok" and origin.name == "Storefront"
    assert Manifest.objects.get(pk=origin.manifest_id).status == "ok"
    assert not AgentEvent.objects.filter(
        agent=origin, kind=AgentEvent.Kind.MANIFEST_ENTRY_REMOVED
    ).exists()
    assert _listed(origin)

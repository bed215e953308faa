"""An agent that never produced a card is its owner's (and staff's) only (issue 39, items 1-2).

The README's own example submits a URL that cannot be fetched; the agent it makes has no card,
no name and nothing a searcher can use. Real accounts, a real crawl against a card server on
127.0.0.1: the owner sees the agent by id, in their lists and on "My agents", with one sentence
saying why there is no card and when the next try is; another account and anonymous readers see
it nowhere, on every GET route of the URLconf (tests/test_visibility.py's walk) and on the
search doors for programs; once a card comes, everyone sees it.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import catalogue, crawling
from cards.catalogue.no_card import no_card_sentence
from cards.models import Agent
from cards.rendering.store import agent_changed
from tests.factories import agent_from_card, minimal_card
from tests.support import CardServer
from tests.test_visibility import get_routes, leaked, paths_for

pytestmark = pytest.mark.django_db

WORD = "CanaryUncardedZq"
PATH = f"/{WORD.lower()}/agent-card.json"
IDENTIFIER = f"urn:air:{WORD.lower()}.example:a2a:waiting"


def api_client(user: Any) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def page_client(user: Any) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def world(
    card_server: CardServer, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> dict[str, Any]:
    users = get_user_model().objects
    alice = users.create_user(username="alice")
    bob = users.create_user(username="bob")
    staff = users.create_user(username="curator", is_staff=True)
    public = agent_from_card(minimal_card(name="Public helper"))
    # Alice submits a URL that answers 404: the crawl runs (eager) and stores no card.
    card_server.serve(PATH, b'{"error": "not here"}', status=404)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api_client(alice).post(
            "/api/v1/agents", {"url": card_server.url(PATH)}, format="json"
        )
    assert answer.status_code == 202, answer.content
    uncarded = Agent.objects.get(pk=answer.json()["id"])
    # An ARD identifier before any card, as a manifest entry gives its agent (docs/ard.md).
    Agent.objects.filter(pk=uncarded.pk).update(ard_identifier=IDENTIFIER)
    agent_changed(uncarded.pk)
    uncarded.refresh_from_db()
    assert uncarded.moderation == Agent.Moderation.APPROVED  # auto-approved, as in make run
    assert uncarded.latest_snapshot_id is None and uncarded.last_crawled_at is not None
    assert uncarded.last_error and uncarded.next_crawl_at is not None
    cache.delete(catalogue.FACET_CACHE_KEY)
    return {"alice": alice, "bob": bob, "staff": staff, "public": public, "agent": uncarded}


@pytest.mark.parametrize("reader", ["anonymous", "bob"])
def test_no_get_route_shows_an_agent_without_a_card_to_others(
    world: dict[str, Any], reader: str
) -> None:
    client = api_client(None if reader == "anonymous" else world["bob"])
    agent = world["agent"]
    failures = []
    for route in get_routes():
        for path in paths_for(route, agent, WORD):
            response = client.get(path)
            assert response.status_code < 500, (path, response.status_code)
            body = b"".join(response) if getattr(response, "streaming", False) else response.content
            if leaked(body, "uncarded", path):
                failures.append((path, response.status_code))
    assert failures == []
    assert client.get(f"/api/v1/agents/{agent.pk}").status_code == 404
    assert page_client(None).get(f"/agents/{agent.pk}").status_code == 404
    listed = [row["id"] for row in client.get("/api/v1/agents").json()["results"]]
    assert listed == [str(world["public"].pk)]


def test_the_owner_reads_why_there_is_no_card_and_when_the_next_try_is(
    world: dict[str, Any],
) -> None:
    agent = world["agent"]
    sentence = no_card_sentence(
        last_error=agent.last_error,
        last_crawled_at=agent.last_crawled_at,
        next_crawl_at=agent.next_crawl_at,
    )
    assert sentence.startswith("No card yet: ") and "next try " in sentence
    assert agent.next_crawl_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") in sentence

    # The API, by id and in the owner's list.
    api = api_client(world["alice"])
    detail = api.get(f"/api/v1/agents/{agent.pk}")
    assert detail.status_code == 200 and detail.json()["owned"] is True
    assert detail.json()["crawl"]["last_error"] == agent.last_error
    assert str(agent.pk) in [row["id"] for row in api.get("/api/v1/agents").json()["results"]]

    # The agent page: one state in words, nothing only a card can fill, no link that fails.
    pages = page_client(world["alice"])
    page = pages.get(f"/agents/{agent.pk}")
    assert page.status_code == 200
    text = page.content.decode()
    assert f'<p class="notice" id="no-card">{html.escape(sentence)}</p>' in text
    for only_with_a_card in (
        'id="badge"', "A2A status badge", "not checked", "degraded", "The card lists no skills",
        "No named schema", "Live checks", "Embed the badge", "/card\"", "attestation",
    ):  # fmt: skip
        assert only_with_a_card not in text, only_with_a_card
    links = [part.split('"', 1)[0] for part in text.split('href="')[1:]]
    for link in links:
        if link.startswith("/") and not link.startswith("//"):
            answer = pages.get(link) if not link.startswith("/api/") else api.get(link)
            assert answer.status_code == 200, (link, answer.status_code)

    # My agents: the reason and the next try.
    mine = pages.get("/my-agents").content.decode()
    assert f'href="/agents/{agent.pk}"' in mine and html.escape(sentence) in mine

    # The home page shows it to its owner after every agent with a card, with the sentence.
    home = pages.get("/").content.decode()
    public_at, uncarded_at = home.find(str(world["public"].pk)), home.find(str(agent.pk))
    assert 0 <= public_at < uncarded_at
    assert html.escape(sentence) in home

    # Staff see the page too; another account sees neither the page nor a row on My agents.
    assert page_client(world["staff"]).get(f"/agents/{agent.pk}").status_code == 200
    assert page_client(world["bob"]).get(f"/agents/{agent.pk}").status_code == 404
    assert str(agent.pk) not in page_client(world["bob"]).get("/my-agents").content.decode()
    assert str(agent.pk) not in page_client(None).get("/my-agents").content.decode()


def test_the_first_card_lists_it_for_everyone(
    world: dict[str, Any], card_server: CardServer
) -> None:
    agent = world["agent"]
    card_server.serve(PATH, json.dumps(minimal_card(name="Arrived at last")).encode())
    crawling.agent_crawl(agent_id=agent.pk)

    anonymous = api_client(None)
    assert anonymous.get(f"/api/v1/agents/{agent.pk}").json()["name"] == "Arrived at last"
    assert str(agent.pk) in [r["id"] for r in anonymous.get("/api/v1/agents").json()["results"]]
    page = page_client(None).get(f"/agents/{agent.pk}").content.decode()
    assert 'id="badge"' in page and 'id="no-card"' not in page
    cache.delete(catalogue.FACET_CACHE_KEY)
    assert f"/agents/{agent.pk}" in page_client(None).get("/").content.decode()


def test_change_feeds_never_show_others_an_agent_that_never_had_a_card(
    world: dict[str, Any],
) -> None:
    agent = world["agent"]
    agent.refresh_from_db()
    assert agent.ever_public is False  # approved, but never with a card: never public
    since = (agent.created_at - dt.timedelta(minutes=1)).isoformat()
    for reader in (None, world["bob"]):
        feed = api_client(reader).get("/api/v1/agents", {"updated_since": since}).json()
        assert str(agent.pk) not in json.dumps(feed)
    owner_feed = api_client(world["alice"]).get("/api/v1/agents", {"updated_since": since})
    assert str(agent.pk) in owner_feed.content.decode()


def test_ard_search_and_list_leave_it_out(world: dict[str, Any]) -> None:
    agent = world["agent"]
    for reader in (None, world["bob"]):
        client = api_client(reader)
        listed = client.get("/ard/agents").json()["items"]
        assert [item["metadata"]["registryId"] for item in listed] == [str(world["public"].pk)]
        assert client.get(f"/ard/agents/{IDENTIFIER}").status_code == 404
        found = client.post(
            "/ard/search", {"query": {"text": "helper agent"}, "federation": "none"}, format="json"
        ).json()["results"]
        assert str(agent.pk) not in json.dumps(found)


@pytest.mark.django_db(transaction=True)
def test_mcp_and_a2a_leave_it_out(card_server: CardServer, loopback_allowed: None) -> None:
    from tests.protocols.test_a2a import _result, _send
    from tests.support import mcp_call, serving_asgi

    owner = get_user_model().objects.create_user(username="owner")
    public = agent_from_card(minimal_card(name="Weather helper", description="Forecasts."))
    card_server.serve(PATH, b"", status=404)
    uncarded = Agent.objects.create(
        url=card_server.url(PATH), card_url=card_server.url(PATH), submitted_by=owner
    )
    crawling.agent_crawl(agent_id=uncarded.pk)
    assert Agent.objects.get(pk=uncarded.pk).latest_snapshot_id is None
    with serving_asgi() as base:
        listed = mcp_call(base, "search_agents", {}).structuredContent["results"]
        assert [row["id"] for row in listed] == [str(public.pk)]
        assert mcp_call(base, "get_agent", {"id": str(uncarded.pk)}).isError
        answer = _result(_send(base, [{"text": "weather forecasts"}])["task"])
        assert str(uncarded.pk) not in json.dumps(answer)
        assert [agent["id"] for agent in answer["agents"]] == [str(public.pk)]

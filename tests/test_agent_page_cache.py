"""The anonymous agent page kept rendered per version of the agent's row (issue 49;
cards/catalogue/page_cache.py): a second read is the same bytes from one query, and every kind
of change to the agent shows on the next read, made in the same transaction as the reads (a
test's) or not. Owners, staff and paged requests are rendered for them; a cache that does not
answer is a miss."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from cards.catalogue import page_cache
from cards.crawling import card_ingest
from cards.models import Agent
from cards.moderation import agent_moderate
from live.report import FAIL, MUST, Check
from publishers.models import Origin
from publishers.ownership import origin_lost, origin_verified
from registry.http import FetchResult
from tests.factories import agent_from_card, minimal_card
from tests.live_reports import record

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC)
FAILING = Check(
    id="CORE-SEND-001", title="SendMessage answers", level=MUST, outcome=FAIL, detail="no answer"
)


def read(client: Client, agent: Agent, query: str = "") -> tuple[Any, int]:
    """The page and the number of queries it took."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/agents/{agent.pk}{query}")
    return response, len(queries)


def text(client: Client, agent: Agent) -> str:
    response, _ = read(client, agent)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


@pytest.fixture
def agent() -> Agent:
    return agent_from_card(minimal_card(name="Kept agent"))


# This process's own memory: tests on the other xdist worker empty the shared Redis database
# (cache.clear()) at any moment, which would make a kept page a miss here.
OWN_CACHE = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@override_settings(CACHES=OWN_CACHE)
def test_a_second_read_is_the_same_page_from_one_query(client: Client, agent: Agent) -> None:
    first, rendered = read(client, agent)
    second, kept = read(client, agent)
    assert first.status_code == second.status_code == 200
    assert second.content == first.content
    assert rendered > 1 and kept == 1  # the row's version, through the gate
    for header in ("Content-Type", "Content-Security-Policy", "X-Content-Type-Options"):
        assert second[header] == first[header]


def test_a_change_by_update_shows_at_once(client: Client, agent: Agent) -> None:
    assert "Kept agent" in text(client, agent)
    # No save(), no updated_at, no re-rendering of the documents: the row's version still moves.
    Agent.objects.filter(pk=agent.pk).update(name="Renamed agent")
    assert "Renamed agent" in text(client, agent)
    Agent.objects.filter(pk=agent.pk).update(last_error="the card answered 503")
    assert "the card answered 503" in text(client, agent)
    Agent.objects.filter(pk=agent.pk).update(next_crawl_at=T0)
    assert "Next try 2026-11-20 08:30 UTC." in text(client, agent)


def test_a_new_card_shows_at_once(client: Client, agent: Agent) -> None:
    assert "Echo" in text(client, agent)
    card = minimal_card(
        name="Kept agent",
        skills=[{"id": "sum", "name": "Summarise", "description": "Shorter.", "tags": ["text"]}],
    )
    card_ingest(agent_id=agent.pk, result=FetchResult.local(agent.url, json.dumps(card).encode()))
    body = text(client, agent)
    assert "Summarise" in body and "Echo" not in body


def test_a_live_run_shows_at_once(client: Client, agent: Agent) -> None:
    assert "CORE-SEND-001" not in text(client, agent)
    record(agent, [FAILING], at=T0)
    body = text(client, agent)
    assert "live checks fail" in body and "CORE-SEND-001" in body


def test_a_publisher_and_an_owner_show_at_once(client: Client, agent: Agent) -> None:
    assert "publisher not verified" in text(client, agent)
    account = get_user_model().objects.create_user(username="publisher")
    proof = Origin.objects.create(
        account=account, origin="https://agents.example.com", state=Origin.State.VERIFIED
    )
    origin_verified(proof)  # the agent moves to the account and shows its publisher
    assert Agent.objects.get(pk=agent.pk).submitted_by_id == account.pk
    assert "Verified publisher: agents.example.com" in text(client, agent)
    origin_lost("https://agents.example.com")
    assert "publisher not verified" in text(client, agent)


def test_moderation_decides_at_once(client: Client, agent: Agent) -> None:
    staff = get_user_model().objects.create_user(username="curator", is_staff=True)
    assert '<span class="state good">featured</span>' not in text(client, agent)
    agent_moderate(agent=agent, state="hidden", actor=staff, reason="spam")
    assert read(client, agent)[0].status_code == 404  # the gate, before the cache
    agent_moderate(agent=agent, state="featured", actor=staff)
    assert '<span class="state good">featured</span>' in text(client, agent)
    Agent.objects.filter(pk=agent.pk).update(deleted_at=T0)
    assert read(client, agent)[0].status_code == 404


def test_owners_and_staff_get_their_own_page_and_never_the_kept_one(
    client: Client, agent: Agent
) -> None:
    users = get_user_model().objects
    owner = users.create_user(username="owner")
    Agent.objects.filter(pk=agent.pk).update(submitted_by=owner)
    record(agent, [FAILING], at=T0)
    anonymous = text(client, agent)
    assert text(client, agent) == anonymous  # now kept
    for user in (owner, users.create_user(username="curator", is_staff=True)):
        signed_in = Client()
        signed_in.force_login(user)
        body, count = read(signed_in, agent)
        assert count > 1  # rendered for them
        page = body.content.decode()
        assert "Sign out" in page and "To run the checks now" in page
        assert "Sign out" not in anonymous and "To run the checks now" not in anonymous
    assert text(Client(), agent) == anonymous  # and theirs was not kept for anonymous readers


def test_a_page_with_a_query_is_rendered_each_time(client: Client, agent: Agent) -> None:
    first, rendered = read(client, agent, "?skills_page=2")
    second, again = read(client, agent, "?skills_page=2")
    assert first.content == second.content
    assert rendered == again > 1


@override_settings(REGISTRY_AGENT_PAGE_CACHE_SECONDS=0)
def test_nothing_is_kept_when_the_setting_is_zero(client: Client, agent: Agent) -> None:
    _, rendered = read(client, agent)
    _, again = read(client, agent)
    assert rendered == again > 1


def test_a_cache_that_does_not_answer_is_a_miss(client: Client, agent: Agent) -> None:
    normal = text(client, agent)
    closed = {
        "default": {
            "BACKEND": "registry.metrics_cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # the discard port: nothing listens
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    with override_settings(CACHES=closed):
        for _ in range(2):
            response, count = read(client, agent)
            assert response.status_code == 200 and response.content.decode() == normal
            assert count > 1


def test_the_key_names_the_code_the_page_is_made_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = tmp_path / "cards" / "templates" / "catalogue" / "agent.html"
    template.parent.mkdir(parents=True)
    template.write_text("<h1>{{ agent.name }}</h1>")
    monkeypatch.setattr(page_cache, "_PROJECT", tmp_path)
    monkeypatch.setattr(page_cache, "_code_version", None)
    before = page_cache.code_version()
    template.write_text("<h1>{{ agent.name }}!</h1>")
    monkeypatch.setattr(page_cache, "_code_version", None)
    after = page_cache.code_version()
    assert before != after
    assert page_cache.code_version() == after  # read once a process


@override_settings(CACHES=OWN_CACHE)
def test_a_schema_reindex_shows_at_once(client: Client) -> None:
    """manage.py reindex_schemas writes schema rows, not the agent's: it makes the row a new
    version too, or a page kept before it would show the old schemas for the cache's time."""
    from django.core.management import call_command

    from schemas_app.models import SchemaUse

    agent = agent_from_card(
        minimal_card(
            name="Schema'd agent",
            defaultInputModes=["application/json;schema=ParcelDoor"],
            schemas={"ParcelDoor": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        )
    )
    assert "ParcelDoor" in text(client, agent)
    SchemaUse.objects.filter(agent=agent).delete()
    Agent.objects.filter(pk=agent.pk).update(name="Schema'd agent")  # kept without its schemas
    text(client, agent)
    kept = text(client, agent)
    call_command("reindex_schemas", agent=str(agent.pk), stdout=io.StringIO())
    assert text(client, agent) != kept
    assert SchemaUse.objects.filter(agent=agent).exists()

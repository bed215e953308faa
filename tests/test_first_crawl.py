"""A first crawl writes what a full rendering would, without reading what a new agent cannot
have yet: an earlier snapshot, schema uses, keys, pinned keys (its card is unsigned) or
earlier attempts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cards import crawling
from cards.models import Agent, CrawlAttempt
from cards.rendering import store
from schemas_app.models import SchemaUse
from tests.schemas.cards import fight_card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)

# What a first crawl of an agent with an unsigned card leaves unread (its locked read does not
# join the previous snapshot either: there is none).
UNREAD = (
    'FROM "cards_snapshot"',
    'JOIN "cards_snapshot"',
    'FROM "schemas_app_schemause"',
    'FROM "cards_agentkey"',
    'FROM "cards_pinnedkey"',
    'FROM "cards_crawlattempt"',
    'DELETE FROM "schemas_app_schemause"',
)


def _serve(card_server: CardServer, path: str, replies: list[Reply]) -> str:
    """Serve ``replies`` one after the other at ``path`` (the last one from then on)."""

    def answer(request: Any) -> Reply:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    card_server.routes[path] = answer
    return card_server.url(path)


def _card_reply(card: dict[str, Any]) -> Reply:
    return Reply(body=json.dumps(card).encode(), headers={"Content-Type": "application/json"})


def _documents(agent_id: Any) -> tuple[Any, Any, list[str], list[Any]]:
    row = Agent.objects.get(pk=agent_id)
    return json.loads(row.summary_doc), json.loads(row.detail_doc), row.tags, row.facet_keys


def _rendered_again(agent_id: Any) -> tuple[Any, Any, list[str], list[Any]]:
    """The documents a full rendering makes from the rows (uptimes and keys counted)."""
    store.render_all()
    return _documents(agent_id)


def test_a_first_crawl_reads_nothing_a_new_agent_cannot_have(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    url = _serve(card_server, "/fight.json", [_card_reply(fight_card())])
    agent = Agent.objects.create(url=url, card_url=url)

    with CaptureQueriesContext(connection) as queries:
        assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    statements = [q["sql"] for q in queries.captured_queries]
    read = [s for s in statements if any(part in s for part in UNREAD)]
    assert read == [], read

    # Its schema uses are written all the same, and the documents are a full rendering's.
    assert SchemaUse.objects.filter(agent=agent).exists()
    crawled = _documents(agent.pk)
    assert crawled[1]["health"]["uptime_7d"] == 1.0 == crawled[1]["health"]["uptime_30d"]
    assert crawled == _rendered_again(agent.pk)


def test_a_first_stored_card_after_failed_crawls_counts_them(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    """An agent whose first crawls failed has no card yet but has attempts: they count."""
    missing = Reply(status=404, body=b"not here", headers={"Content-Type": "text/plain"})
    url = _serve(card_server, "/late.json", [missing, _card_reply(fight_card())])
    agent = Agent.objects.create(url=url, card_url=url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "error"
    assert CrawlAttempt.objects.filter(agent=agent, success=False).count() == 1

    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    crawled = _documents(agent.pk)
    assert (crawled[1]["health"]["uptime_7d"], crawled[1]["health"]["uptime_30d"]) == (0.5, 0.5)
    assert crawled == _rendered_again(agent.pk)


def test_a_changed_card_still_replaces_its_schema_uses(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    """The second stored card reads and replaces the first one's schema uses."""
    first = fight_card()
    second = fight_card(version="2.0.0")
    second["schemas"] = {"fightComparison": second["schemas"]["fightComparison"]}
    url = _serve(card_server, "/changing.json", [_card_reply(first), _card_reply(second)])
    agent = Agent.objects.create(url=url, card_url=url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    before = set(SchemaUse.objects.filter(agent=agent).values_list("name", flat=True))

    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    after = set(SchemaUse.objects.filter(agent=agent).values_list("name", flat=True))
    assert "fightResponse" in before and "fightResponse" not in after
    assert after <= before
    assert _documents(agent.pk) == _rendered_again(agent.pk)

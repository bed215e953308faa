"""A 304 re-crawl updates the stored documents in place: crawl state and uptime, nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cards import crawling
from cards.models import Agent
from cards.tasks import crawl_agent
from tests.factories import minimal_card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_304_is_one_update_and_keeps_the_documents_right(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    body = json.dumps(minimal_card(name="Steady")).encode()

    def card(request: Any) -> Reply:
        if request.headers.get("If-None-Match") == '"v1"':
            return Reply(status=304, body=b"", headers={"ETag": '"v1"'})
        return Reply(body=body, headers={"Content-Type": "application/json", "ETag": '"v1"'})

    card_server.routes["/card.json"] = card
    url = card_server.url("/card.json")
    agent = Agent.objects.create(url=url, card_url=url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    first = Agent.objects.get(pk=agent.pk)

    with CaptureQueriesContext(connection) as queries:
        assert crawling.agent_crawl(agent_id=agent.pk) == "not-modified"
    writes = [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith(("UPDATE", "INSERT"))
    ]
    assert len([w for w in writes if w.startswith('UPDATE "cards_agent"')]) == 1
    assert len([w for w in writes if w.startswith('INSERT INTO "cards_crawlattempt"')]) == 1
    # Seven statements in all (the crawl's read, BEGIN, the locked read, the attempt, the
    # uptime, the UPDATE, COMMIT), and the card's own columns are never read: a 304 changes
    # none of them.
    statements = [q["sql"] for q in queries.captured_queries]
    assert len(statements) == 7, statements
    reads = [q for q in statements if q.startswith("SELECT") and 'FROM "cards_agent"' in q]
    assert reads and not any('"findings"' in q or '"search_text"' in q for q in reads), reads
    assert not any('"cards_snapshot"' in q for q in statements)  # unsigned: nothing to verify

    after = Agent.objects.get(pk=agent.pk)
    detail = json.loads(after.detail_doc)
    assert detail["crawl"]["last_http_status"] == 304
    assert detail["health"]["uptime_7d"] == 1.0
    assert (
        json.loads(after.summary_doc)["last_crawled_at"]
        != json.loads(first.summary_doc)["last_crawled_at"]
    )
    assert detail["skills"] == json.loads(first.detail_doc)["skills"]

    # Through the task, the same seven: the read for the politeness gate is the crawl's read.
    with CaptureQueriesContext(connection) as queries:
        assert crawl_agent.apply(args=[str(agent.pk)]).get() == "not-modified"
    assert len(queries.captured_queries) == 7, [q["sql"] for q in queries.captured_queries]

"""A 304 re-crawl updates the stored documents in place: crawl state and uptime, nothing else."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cards import crawling
from cards.models import Agent, CrawlAttempt
from cards.rendering.uptime import uptimes
from cards.tasks import crawl_agent
from tests.factories import minimal_card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _stored_behind_etag(card_server: CardServer, name: str) -> Agent:
    """An agent whose card is served with an ETag (304 on a match), crawled once."""
    body = json.dumps(minimal_card(name=name)).encode()

    def card(request: Any) -> Reply:
        if request.headers.get("If-None-Match") == '"v1"':
            return Reply(status=304, body=b"", headers={"ETag": '"v1"'})
        return Reply(body=body, headers={"Content-Type": "application/json", "ETag": '"v1"'})

    card_server.routes["/card.json"] = card
    url = card_server.url("/card.json")
    agent = Agent.objects.create(url=url, card_url=url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    return agent


def test_a_304_is_one_update_and_keeps_the_documents_right(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    agent = _stored_behind_etag(card_server, "Steady")
    first = Agent.objects.get(pk=agent.pk)

    with CaptureQueriesContext(connection) as queries:
        assert crawling.agent_crawl(agent_id=agent.pk) == "not-modified"
    writes = [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith(("UPDATE", "INSERT"))
    ]
    assert len([w for w in writes if w.startswith('UPDATE "cards_agent"')]) == 1
    assert len([w for w in writes if w.startswith('INSERT INTO "cards_crawlattempt"')]) == 1
    # Six statements in all (the crawl's read, BEGIN, the locked read that also counts the
    # attempts for the uptimes, the attempt, the UPDATE, COMMIT), and the card's own columns are
    # never read: a 304 changes none of them.
    statements = [q["sql"] for q in queries.captured_queries]
    assert len(statements) == 6, statements
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

    # Through the task, the same six: the read for the politeness gate is the crawl's read.
    with CaptureQueriesContext(connection) as queries:
        assert crawl_agent.apply(args=[str(agent.pk)]).get() == "not-modified"
    assert len(queries.captured_queries) == 6, [q["sql"] for q in queries.captured_queries]


def test_a_304_counts_the_uptimes_as_a_full_rendering_does(
    card_server: CardServer, loopback_allowed: Any
) -> None:
    """The 304 counts the agent's attempts in its locked read, before recording its own; the
    shares it stores are the ones uptimes reads from the attempt rows afterwards, with
    failures and attempts outside either window among them."""
    agent = _stored_behind_etag(card_server, "Flaky")
    other = Agent.objects.create(url=agent.url + "?other", card_url=agent.url + "?other")
    now = timezone.now()
    history = [(1, False), (2, True), (3, False), (10, False), (12, True), (20, False), (40, True)]
    for days, success in history:
        # Another agent's attempts (all failed) never count.
        for owner, ok in ((agent, success), (other, False)):
            CrawlAttempt.objects.create(
                agent=owner,
                started_at=now - timedelta(days=days),
                duration_ms=1,
                outcome="x",
                success=ok,
            )

    assert crawling.agent_crawl(agent_id=agent.pk) == "not-modified"
    health = json.loads(Agent.objects.get(pk=agent.pk).detail_doc)["health"]
    # This crawl, the first one and 6 in 30 days (3 ok), 3 in 7 days (1 ok).
    assert (health["uptime_7d"], health["uptime_30d"]) == (0.6, 0.5)
    assert uptimes([agent.pk])[agent.pk] == (0.6, 0.5)

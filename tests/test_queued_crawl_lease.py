"""A submission's first crawl is queued once: its row is held under the sweep's lease while the
crawl waits in the broker, so the periodic sweep does not claim the same due agent and queue a
second crawl (seen in the multi-host suite: two crawls of one new agent). The broker here is
real Redis with no worker reading it, so the queued crawl stays queued."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone
from rest_framework.test import APIClient

from cards import scheduling, services
from cards.models import Agent
from tests.factories import minimal_card
from tests.support import CardServer
from tests.workers import redis_url

pytestmark = pytest.mark.django_db(transaction=True)


def _queued_crawls() -> int:
    """Crawl messages waiting in the broker (kombu keeps one list per priority step)."""
    client = redis.Redis.from_url(redis_url())
    count = 0
    for key in client.scan_iter(match="celery*"):
        if client.type(key) == b"list":
            count += sum(b"cards.crawl_agent" in m for m in client.lrange(key, 0, -1))
    return count


def test_a_submissions_queued_crawl_is_not_claimed_again_by_the_sweep(
    start_worker: Callable[..., Any],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    card_server.serve("/.well-known/agent-card.json", json.dumps(minimal_card()).encode())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    answer = client.post("/api/v1/agents", {"url": card_server.origin}, format="json")
    assert answer.status_code == 202, answer.content
    agent = Agent.objects.get(pk=answer.json()["id"])
    assert agent.next_crawl_at is not None and agent.next_crawl_at <= timezone.now()  # due
    assert _queued_crawls() == 1
    assert scheduling.claim_due(limit=100) == []  # the queued crawl holds it
    assert agent.lease_until is not None
    assert agent.lease_until > timezone.now() + scheduling.LEASE - timedelta(minutes=1)
    # A crawl lost with its worker: once the lease has run out, the sweep takes the agent.
    later = timezone.now() + scheduling.LEASE + timedelta(seconds=1)
    assert scheduling.claim_due(limit=100, now=later) == [agent.pk]


def test_a_queued_manifest_entry_is_held_too(start_worker: Callable[..., Any]) -> None:
    """The helper a manifest's new entries are queued by (cards/manifest_crawling.py). When the
    broker cannot take a message the lease is taken back and the agent stays due: a submission
    made by a web process whose broker is down is swept later
    (tests/test_celery_worker.py::test_a_submission_while_the_broker_is_down_is_kept_and_swept_later)."""
    due = Agent.objects.create(url="https://listed.example/a", next_crawl_at=timezone.now())
    assert services.enqueue_leased_crawl(due.pk) is True
    assert _queued_crawls() == 1
    assert scheduling.claim_due(limit=100) == []
    due.refresh_from_db()
    assert due.lease_until is not None and due.lease_until > timezone.now()

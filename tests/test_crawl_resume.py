"""A crawl whose worker is killed in the middle comes back within the running lease, not the
queue's 10 minutes; a crawl that runs long is not claimed a second time meanwhile (issue 43,
section 5; cards/scheduling.py).

Real Celery workers (prefork) on Redis; the card's server holds the first request until the
whole worker (main process and child) has been killed with SIGKILL, as a lost node would be.
Its message then stays unacknowledged in Redis for the broker's visibility timeout (an hour):
only the row's lease brings the crawl back.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from cards import scheduling, services
from cards.models import Agent, Snapshot
from cards.tasks import sweep
from tests.held_crawl import HeldCard, kill_worker
from tests.support import CardServer
from tests.workers import wait_for

pytestmark = pytest.mark.celery_worker

# REGISTRY_CRAWL_RUNNING_LEASE_SECONDS' default: the bound docs/crawling.md states.
RUNNING_LEASE = timedelta(seconds=90)


def crawled(agent: Agent) -> Callable[[], bool]:
    def done() -> bool:
        agent.refresh_from_db()
        return agent.status == "ok"

    return done


def test_a_killed_workers_crawl_is_due_again_within_the_running_lease(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    """With the default settings: when the worker dies, the row is claimable by the sweep
    within the running lease (90 s; it was the queue's 600 s: 10.5 minutes with the sweep's
    interval), and not before; the crawl then runs once more and stores one snapshot."""
    card = HeldCard(card_server, "Killed")
    worker = start_worker(pool="prefork", concurrency=1)
    agent, _ = services.agent_submit(url=card.url, user=None)
    assert card.first.wait(60), "the worker never fetched the card"
    agent.refresh_from_db()
    assert agent.lease_until is not None
    assert agent.lease_until <= timezone.now() + RUNNING_LEASE + timedelta(seconds=2)
    assert scheduling.claim_due(limit=100) == []  # it is running: no second crawl
    kill_worker(worker)
    killed = timezone.now()
    card.release()
    agent.refresh_from_db()
    assert agent.status == "pending" and agent.lease_until is not None
    resumes_after = (agent.lease_until - killed).total_seconds()
    print(f"due again {resumes_after:.1f} s after the worker was killed")
    assert resumes_after <= RUNNING_LEASE.total_seconds() + 1, resumes_after
    assert scheduling.claim_due(limit=100, now=agent.lease_until - timedelta(seconds=1)) == []

    start_worker(pool="prefork", concurrency=1)
    claimed = scheduling.claim_due(limit=100, now=agent.lease_until + timedelta(seconds=1))
    assert claimed == [agent.pk]
    assert services.enqueue_crawls(claimed)
    assert wait_for(crawled(agent)), (agent.status, agent.last_error)
    assert card.calls == 2
    assert Snapshot.objects.filter(agent=agent).count() == 1


def test_a_long_crawl_stays_held_and_a_killed_one_is_swept_again_in_seconds(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    card_server: CardServer,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A running lease of 3 s (the workers' setting): a crawl held for 7 s (more than two
    leases) is renewed and no sweep claims it; once its worker is killed, sweeps run every
    half second in real time bring it back in at most the lease and a new worker crawls it."""
    monkeypatch.setenv("REGISTRY_CRAWL_RUNNING_LEASE_SECONDS", "3")
    monkeypatch.setenv("REGISTRY_FETCH_READ_TIMEOUT", "30")  # the held request must not time out
    monkeypatch.setenv("REGISTRY_FETCH_TOTAL_TIMEOUT", "40")
    card = HeldCard(card_server, "Renewed")
    worker = start_worker(pool="prefork", concurrency=1)
    agent, _ = services.agent_submit(url=card.url, user=None)
    assert card.first.wait(60), "the worker never fetched the card"
    held_since = time.monotonic()
    while time.monotonic() - held_since < 7:  # longer than the lease: it is renewed
        assert sweep() == 0, "a running crawl was claimed by the sweep"
        time.sleep(0.5)
    kill_worker(worker)
    killed = time.monotonic()
    card.release()
    start_worker(pool="prefork", concurrency=1)
    swept = 0
    while not swept and time.monotonic() - killed < 60:
        swept = sweep()
        time.sleep(0.5)
    resumed = time.monotonic() - killed
    print(f"swept again {resumed:.1f} s after the worker was killed")
    assert swept == 1 and resumed <= 3 + 2, resumed  # the lease, a sweep's half second
    assert wait_for(crawled(agent)), (agent.status, agent.last_error)
    assert card.calls == 2
    assert Snapshot.objects.filter(agent=agent).count() == 1

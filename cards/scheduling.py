"""Which agents are due, claimed so that concurrent sweeps never take the same one twice.

A row has two leases. While its crawl waits in the queue (a sweep's claim, a submission's
first crawl) it is held for :data:`LEASE` (10 minutes): the queue may be long, and the sweep
must not queue the agent a second time meanwhile. Once a worker runs the crawl it holds the row
for :data:`RUNNING_LEASE` (90 s), renewed every third of it for as long as the crawl goes on
(:func:`held_while_crawling`). A worker that is killed, or whose crawl is cancelled because
Redis went away, stops renewing: the row is due again at most :data:`RUNNING_LEASE` after, and
the next sweep queues it (docs/crawling.md, "Faults"). Before this the running crawl kept the
queue's 10 minutes and resumed 10.5 minutes after its worker died (issue 43, section 5).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from cards.models import Agent, CrawlAttempt

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=settings.REGISTRY_CRAWL_LEASE_SECONDS)
RUNNING_LEASE = timedelta(seconds=settings.REGISTRY_CRAWL_RUNNING_LEASE_SECONDS)


def claim_due(
    *, limit: int, now: datetime | None = None, lease: timedelta = LEASE
) -> list[uuid.UUID]:
    """Claim up to ``limit`` due agents (``next_crawl_at <= now``, not leased) for a crawl.

    ``FOR UPDATE SKIP LOCKED`` lets two sweeps run at once: each takes rows the other has not
    locked, and the lease keeps a claimed row out of later sweeps until its crawl records an
    outcome, or the lease runs out (a worker died) and the row is due again.
    """
    now = now or timezone.now()
    with transaction.atomic():
        ids = list(
            Agent.objects.filter(next_crawl_at__lte=now)
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
            .order_by("next_crawl_at")
            .select_for_update(skip_locked=True)
            .values_list("id", flat=True)[:limit]
        )
        if ids:
            Agent.objects.filter(id__in=ids).update(lease_until=now + lease)
    return ids


def hold(agent_ids: Sequence[Any], until: datetime, *, extend_only: bool = False) -> int:
    """Lease these agents' rows until ``until``; ``extend_only``: only rows still leased (a crawl
    that recorded its outcome has given its lease back) and leased for less. Returns how many."""
    rows = Agent.objects.filter(pk__in=list(agent_ids))
    if extend_only:
        rows = rows.filter(lease_until__isnull=False, lease_until__lt=until)
    return rows.update(lease_until=until)


def hold_queued(agent_id: Any, countdown: float) -> None:
    """The agent's crawl goes back to the queue for ``countdown`` seconds (its origin's turn):
    held as a queued crawl from then on."""
    hold([agent_id], timezone.now() + timedelta(seconds=countdown) + LEASE, extend_only=True)


@contextmanager
def held_while_crawling(agent_ids: Sequence[Any]) -> Iterator[None]:
    """Hold these rows for :data:`RUNNING_LEASE` while this process crawls them (one crawl, or
    a batch one after another), renewed every third of it from a thread of its own; a row
    whose crawl records its outcome gives the lease back and is not renewed."""
    ids = list(agent_ids)
    try:
        hold(ids, timezone.now() + RUNNING_LEASE)  # shorter than the queue's: it is renewed
    except DatabaseError:  # the database is away: the crawl meets it too, and is retried
        logger.warning("crawl lease not taken", exc_info=True)
    done = threading.Event()

    def renew() -> None:
        try:
            while not done.wait(RUNNING_LEASE.total_seconds() / 3):
                try:
                    hold(ids, timezone.now() + RUNNING_LEASE, extend_only=True)
                except Exception:  # the database is away: the crawl will find out too
                    logger.warning("crawl lease not renewed", exc_info=True)
        finally:
            connection.close()  # this thread's own

    renewer = threading.Thread(target=renew, name="crawl-lease", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        done.set()
        renewer.join(10)


def prune_attempts(*, older_than_days: int = 90, now: datetime | None = None) -> int:
    """Delete crawl attempts older than the retention period; returns how many."""
    now = now or timezone.now()
    deleted, _ = CrawlAttempt.objects.filter(
        started_at__lt=now - timedelta(days=older_than_days)
    ).delete()
    return deleted

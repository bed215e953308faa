"""Which agents are due, claimed so that concurrent sweeps never take the same one twice."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cards.models import Agent, CrawlAttempt

LEASE = timedelta(seconds=settings.REGISTRY_CRAWL_LEASE_SECONDS)


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


def prune_attempts(*, older_than_days: int = 90, now: datetime | None = None) -> int:
    """Delete crawl attempts older than the retention period; returns how many."""
    now = now or timezone.now()
    deleted, _ = CrawlAttempt.objects.filter(
        started_at__lt=now - timedelta(days=older_than_days)
    ).delete()
    return deleted

"""Celery tasks of proven origins: the periodic sweep of due re-checks, and one re-check.

``publishers.recheck_due_origins`` runs from ``CELERY_BEAT_SCHEDULE`` every
``REGISTRY_ORIGIN_RECHECK_SECONDS`` (beat, or the in-process schedule of ``make run``): it
claims at most ``REGISTRY_ORIGIN_RECHECK_BATCH`` verified origins whose ``next_check_at`` has
come and queues a ``publishers.recheck_origin`` for each (run in place when tasks are eager).
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from publishers import origins
from publishers.models import Origin

logger = logging.getLogger(__name__)


@shared_task(
    name="publishers.recheck_origin", ignore_result=True, soft_time_limit=60, time_limit=90
)
def recheck_origin(origin_id: int) -> str:
    """Re-check one verified origin; what became of it ("passed", "failed", "skipped")."""
    origin = Origin.objects.filter(pk=origin_id).first()
    if origin is None:
        return "skipped"
    outcome = origins.recheck(origin)
    if outcome is None:
        return "skipped"
    if not outcome.ok:
        logger.info("origin %s re-check failed: %s", origin.origin, outcome.reason)
    return "passed" if outcome.ok else "failed"


@shared_task(
    name="publishers.recheck_due_origins", ignore_result=True, soft_time_limit=50, time_limit=60
)
def recheck_due_origins(limit: int | None = None) -> int:
    """Queue the re-checks that are due; how many."""
    due = origins.claim_due(limit or settings.REGISTRY_ORIGIN_RECHECK_BATCH)
    for origin_id in due:
        recheck_origin.delay(origin_id)
    return len(due)

"""Celery tasks of the live checks: after a crawl (when due) and on an owner's request."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q
from django.utils import timezone

from cards import politeness
from cards.discovery import origin_of
from cards.models import Agent
from live import runner

logger = logging.getLogger(__name__)

# Outcomes of a crawl after which the agent's endpoints are worth asking (the card is there).
_CHECKED_AFTER = frozenset({"stored", "unchanged", "not-modified"})
# How long a queued check keeps the sweep from queueing the agent again.
_QUEUED_MARK_SECONDS = 600


def due(agent: Any) -> bool:
    if agent.live_checked_at is None:
        return True
    age = (timezone.now() - agent.live_checked_at).total_seconds()
    return age >= settings.REGISTRY_LIVE_INTERVAL_SECONDS


@shared_task(
    bind=True,
    name="live.check_agent",
    ignore_result=True,
    acks_late=True,
    # The run's REGISTRY_LIVE_RUN_SECONDS (60 s) and the messages after it (each bounded by
    # REGISTRY_LIVE_REQUEST_TIMEOUT and the politeness gate's wait).
    soft_time_limit=180,
    time_limit=210,
)
def check_agent(self: Task, agent_id: str, force: bool = False) -> str:
    """Check one agent (unless it was checked within the interval and ``force`` is off). Waits
    its turn at the origin of its first interface, as crawls do, by being queued again: a probe
    never holds a worker while an origin is busy, and never delays a crawl by more than the
    origin's gap."""
    agent = runner.target(agent_id)
    if agent is None:
        return "missing"
    if not force and not due(agent):
        return "not-due"
    origin = origin_of(agent.card_url or agent.url)
    eager = bool(self.request.is_eager)
    wait = politeness.acquire(origin) if not eager else 0.0
    if wait > 0:
        self.apply_async(args=[agent_id], kwargs={"force": force}, countdown=wait)
        return "deferred"
    try:
        report = runner.check_agent(agent, force=force)
    finally:
        if not eager:
            politeness.release(origin)
        cache.delete(f"live:queued:{agent_id}")
    logger.info("live check of agent %s: %s", agent_id, report["outcome"])
    return str(report["outcome"])


def after_crawl(agent_id: str, outcome: str) -> None:
    """The crawl hook (cards.hooks), for the in-process mode only: there is no beat there to
    run :func:`sweep`, so a crawl that read a card goes on to check it (when due). With a
    broker, nothing of the checks is on the crawl's path: :func:`sweep` finds what is due."""
    if not settings.REGISTRY_LIVE_CHECKS or outcome not in _CHECKED_AFTER:
        return
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return
    check_agent.apply(args=[str(agent_id)])


def due_agents(limit: int) -> list[Any]:
    """Agents whose card was read since their last check, and not checked within the interval
    (never-checked first)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.REGISTRY_LIVE_INTERVAL_SECONDS)
    rows = (
        Agent.objects.filter(
            deleted_at__isnull=True,
            latest_snapshot__isnull=False,
            last_success_at__isnull=False,
        )
        .filter(
            Q(live_checked_at__isnull=True)
            | Q(live_checked_at__lt=stale, last_success_at__gt=F("live_checked_at"))
        )
        .order_by(F("live_checked_at").asc(nulls_first=True), "pk")
        .values_list("pk", flat=True)[:limit]
    )
    return list(rows)


@shared_task(name="live.sweep", ignore_result=True, soft_time_limit=50, time_limit=60)
def sweep(limit: int | None = None) -> int:
    """Queue the checks that are due (beat, every REGISTRY_LIVE_SWEEP_SECONDS). An agent queued
    and not yet checked is not queued again while its mark lasts."""
    if not settings.REGISTRY_LIVE_CHECKS:
        return 0
    queued = 0
    for agent_id in due_agents(limit or settings.REGISTRY_LIVE_SWEEP_BATCH):
        if not cache.add(f"live:queued:{agent_id}", 1, timeout=_QUEUED_MARK_SECONDS):
            continue
        check_agent.delay(str(agent_id))
        queued += 1
    return queued

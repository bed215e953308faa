"""What every crawl outcome writes: a ``CrawlAttempt`` row, and a failure on the agent row."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from cards import health
from cards.models import Agent, CrawlAttempt
from cards.rendering.store import agent_changed, rendering_once
from registry.http import FetchError


def record_attempt(
    agent: Agent,
    *,
    started_at: datetime,
    outcome: str,
    success: bool,
    http_status: int | None,
    size: int = 0,
    error: FetchError | None = None,
    code: str | None = None,
) -> None:
    CrawlAttempt.objects.create(
        agent=agent,
        started_at=started_at,
        duration_ms=(timezone.now() - started_at).total_seconds() * 1000,
        http_status=http_status,
        bytes=size,
        outcome=outcome,
        success=success,
        error_code=code or (error.code if error else ""),
        error=error.reason[:2000] if error else "",
    )
    # The detail shows uptime from these rows: render again now that this one exists.
    agent_changed(agent.pk)


def elapsed_ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


def record_failure(
    agent_id: Any,
    err: FetchError,
    *,
    started_at: datetime,
    fetch_ms: float,
    code: str | None = None,
) -> None:
    now = timezone.now()
    with transaction.atomic(), rendering_once():
        agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
        if agent is None:
            return
        agent.status = Agent.Status.ERROR
        agent.last_error = err.reason[:2000]
        agent.last_error_code = code or err.code
        agent.last_http_status = err.status
        agent.last_crawled_at = now
        agent.fetch_ms = fetch_ms
        health.after_failure(agent, now, http_status=err.status, retry_after=err.retry_after)
        agent.save()
        record_attempt(
            agent,
            started_at=started_at,
            outcome="error",
            success=False,
            http_status=err.status,
            error=err,
            code=code,
        )

"""Celery tasks: they take ids, load rows and call services."""

from __future__ import annotations

import logging
import random

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from cards import services
from cards.models import Agent

logger = logging.getLogger(__name__)

MAX_RETRY_DELAY = 3600.0


def retry_delay(retries: int, retry_after: float | None, *, base: float | None = None) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins when it asks for more."""
    base = settings.REGISTRY_CRAWL_RETRY_BASE_SECONDS if base is None else base
    ceiling = min(MAX_RETRY_DELAY, base * (2**retries))
    delay = random.uniform(ceiling / 2, ceiling)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_DELAY))
    return delay


@shared_task(
    bind=True,
    name="cards.crawl_agent",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=settings.REGISTRY_CRAWL_MAX_RETRIES,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def crawl_agent(self: Task, agent_id: str) -> str:
    """Crawl one agent. Transient failures are retried with backoff; permanent ones are recorded."""
    try:
        return services.agent_crawl(agent_id=agent_id)
    except services.TransientCrawlError as exc:
        if self.request.is_eager or self.request.retries >= (self.max_retries or 0):
            return "error"
        delay = retry_delay(self.request.retries, exc.retry_after)
        raise self.retry(countdown=delay, exc=exc) from exc
    except SoftTimeLimitExceeded:
        now = timezone.now()
        Agent.objects.filter(pk=agent_id).update(
            status=Agent.Status.ERROR,
            last_error="the crawl took longer than its time limit",
            last_error_code="timeout",
            last_crawled_at=now,
            updated_at=now,
        )
        return "error"

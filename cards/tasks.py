"""Celery tasks: they take ids, load rows and call services."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from cards import crawling, hooks, imports, politeness, queue, scheduling, services
from cards.discovery import origin_of
from cards.models import Agent

logger = logging.getLogger(__name__)

MAX_RETRY_DELAY = 3600.0
SWEEP_LOCK = "registry:sweep-due:lock"


def retry_delay(retries: int, retry_after: float | None, *, base: float | None = None) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins when it asks for more."""
    base = settings.REGISTRY_CRAWL_RETRY_BASE_SECONDS if base is None else base
    ceiling = min(MAX_RETRY_DELAY, base * (2**retries))
    delay = random.uniform(ceiling / 2, ceiling)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_DELAY))
    return delay


class _Again(Exception):
    """A crawl to run again later: ``delay`` seconds, after a transient failure."""

    def __init__(self, delay: float, cause: Exception) -> None:
        super().__init__(str(cause))
        self.delay = delay
        self.cause = cause


def _crawl(task: Task, agent_id: str, *, retries: int) -> str:
    """One agent's crawl inside a task (``crawl_agent``'s, or one of a ``crawl_agents`` batch).

    Waits its turn at the origin (re-queued, not counted as a retry, when the origin is busy);
    raises :class:`_Again` when a transient failure is worth another try and tries are left."""
    eager = bool(task.request.is_eager)
    target = crawling.crawl_target(agent_id)
    if target is None:
        return "missing"
    origin = origin_of(target.card_url or target.url)
    wait = politeness.acquire(origin) if not eager else 0.0
    if wait > 0:  # as a single-agent task, whichever task this crawl runs in
        scheduling.hold_queued(agent_id, wait * 1.5)  # queued again: the queue's lease
        return _defer(task, (agent_id,), wait, queue.PERIODIC, again=crawl_agent, retries=retries)
    # The last try (eager, or no retry left) does not defer on a manifest candidate's
    # transient failure: it goes on to the card paths (docs/ard.md).
    final = eager or retries >= (task.max_retries or 0)
    try:
        outcome = crawling.agent_crawl(agent_id=agent_id, final=final, agent=target)
        return _logged(agent_id, outcome)
    except services.TransientCrawlError as exc:
        if final:
            return _logged(agent_id, "error")
        raise _Again(retry_delay(retries, exc.retry_after), exc) from exc
    except SoftTimeLimitExceeded:
        now = timezone.now()
        Agent.objects.filter(pk=agent_id).update(
            status=Agent.Status.ERROR,
            last_error="the crawl took longer than its time limit",
            last_error_code="timeout",
            last_crawled_at=now,
            lease_until=None,
            updated_at=now,
        )
        raise
    finally:
        if not eager:
            politeness.release(origin)


def _defer(
    task: Task,
    args: tuple[Any, ...],
    wait: float,
    default_priority: int,
    *,
    again: Task | None = None,
    **options: Any,
) -> str:
    """Queue ``task`` (or ``again``) again for its origin's turn, with the priority ``task`` was
    queued with: a submitted crawl deferred by politeness still runs ahead of periodic ones."""
    info = task.request.delivery_info
    priority = info.get("priority") if info else None
    (again or task).apply_async(
        args,
        countdown=wait * random.uniform(1.0, 1.5),
        priority=default_priority if priority is None else priority,
        **options,
    )
    return "deferred"


def _held(task: Task, agent_ids: Sequence[str]) -> AbstractContextManager[None]:
    """The rows of the crawls this task runs, held while it runs (the running lease,
    cards/scheduling.py); in-process (eager) crawls are the caller's own."""
    return nullcontext() if task.request.is_eager else scheduling.held_while_crawling(agent_ids)


# Crawl tasks: acknowledged once done (a lost worker's crawl runs again), retried with backoff.
# A worker that dies holding one leaves its message unacknowledged for the broker's visibility
# timeout (an hour); the row's running lease brings the crawl back within minutes instead.
CRAWL_TASK: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "max_retries": settings.REGISTRY_CRAWL_MAX_RETRIES,
}


@shared_task(
    name="cards.crawl_agent",
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
    **CRAWL_TASK,
)
def crawl_agent(self: Task, agent_id: str) -> str:
    """Crawl one agent. Transient failures are retried with backoff; permanent ones are recorded.

    A crawl waits its turn at the agent's origin (a per-origin limit shared by all workers): when
    the origin is busy, the task is re-queued for later without counting as a retry.
    """
    try:
        with _held(self, [agent_id]):
            return _crawl(self, agent_id, retries=self.request.retries)
    except _Again as again:
        raise self.retry(countdown=again.delay, exc=again.cause) from again.cause
    except (OperationalError, InterfaceError) as exc:
        # The database went away (a restart): the crawl is idempotent, so run it again later.
        if self.request.is_eager:
            raise
        raise self.retry(countdown=retry_delay(self.request.retries, None), exc=exc) from exc
    except SoftTimeLimitExceeded:
        return "error"


@shared_task(name="cards.crawl_agents", **CRAWL_TASK)
def crawl_agents(self: Task, agent_ids: list[str]) -> list[str]:
    """Crawl several agents one after another: the sweep's batches (``REGISTRY_CRAWL_BATCH``).

    One message, one hand-off to a worker process and one acknowledgement for the batch instead
    of one each (docs/crawling.md, "Batches"); each agent keeps its own politeness turn,
    outcome and log line. An agent whose crawl must be tried again, or whose origin is busy,
    is queued on its own (``cards.crawl_agent``) with the backoff it would have had; when the
    database goes away, the agents not crawled yet are tried again as one batch. The time
    limits are per agent, scaled by the batch's size where it is queued
    (:func:`cards.services.enqueue_crawls`); when they run out, the agent being crawled is
    recorded as timed out and the rest are queued on their own.
    """
    with _held(self, agent_ids):
        return _crawl_in_turn(self, agent_ids)


def _crawl_in_turn(task: Task, agent_ids: list[str]) -> list[str]:
    """The crawls of a ``crawl_agents`` batch, one after another."""
    outcomes: list[str] = []
    for position, agent_id in enumerate(agent_ids):
        try:
            outcomes.append(_crawl(task, agent_id, retries=0))
        except _Again as again:
            crawl_agent.apply_async(
                (agent_id,), countdown=again.delay, priority=queue.PERIODIC, retries=1
            )
            outcomes.append("retrying")
        except (OperationalError, InterfaceError) as exc:
            if task.request.is_eager:
                raise
            rest = list(agent_ids[position:])
            delay = retry_delay(task.request.retries, None)
            raise task.retry(args=(rest,), countdown=delay, exc=exc) from exc
        except SoftTimeLimitExceeded:
            outcomes.append("error")
            for later in agent_ids[position + 1 :]:
                services.enqueue_crawl(later, priority=queue.PERIODIC)
            break
    return outcomes


def _logged(agent_id: str, outcome: str) -> str:
    """One line per crawl saying what it recorded (Celery's own "succeeded" line is silenced: a
    crawl that recorded an error did not succeed)."""
    if outcome == "error":
        row = (
            Agent.objects.filter(pk=agent_id)
            .values_list("last_error", "last_http_status", "next_crawl_at")
            .first()
        )
        error, status, next_at = row or ("", None, None)
        logger.warning(
            "crawl of agent %s failed: %s%s; next try %s",
            agent_id,
            error or "no reason recorded",
            f" (HTTP {status})" if status else "",
            next_at.isoformat() if next_at else "not scheduled",
        )
    else:
        logger.info("crawl of agent %s: %s", agent_id, outcome)
    for step in hooks.after_crawl:  # live: queue the agent's live checks when due
        step(agent_id, outcome)
    return outcome


@contextmanager
def _sweep_lock() -> Iterator[bool]:
    """One sweep at a time across all beat and worker processes (Redis ``SET NX EX``)."""
    client = politeness._redis()
    if client is None:
        yield True
        return
    token = str(random.random())
    try:
        acquired = bool(client.set(SWEEP_LOCK, token, nx=True, ex=120))
    except Exception:  # Redis went away: skip this sweep, the next one will run
        logger.warning("sweep skipped: Redis is unreachable", exc_info=True)
        acquired = False
    try:
        yield acquired
    finally:
        try:
            if acquired and client.get(SWEEP_LOCK) == token.encode():
                client.delete(SWEEP_LOCK)
        except Exception:  # the lock expires by itself (120 s)
            logger.warning("sweep lock not released: Redis is unreachable", exc_info=True)


def sweep(*, limit: int | None = None, spread: float = 0.0) -> int:
    """Claim due agents and queue their crawls; returns how many were queued."""
    ids = scheduling.claim_due(limit=limit or settings.REGISTRY_SWEEP_BATCH)
    size = settings.REGISTRY_CRAWL_BATCH
    for start in range(0, len(ids), size):
        countdown = random.uniform(0, spread) if spread else None
        services.enqueue_crawls(ids[start : start + size], countdown=countdown)
    return len(ids)


@shared_task(name="cards.sweep_due", ignore_result=True, soft_time_limit=50, time_limit=60)
def sweep_due() -> int:
    with _sweep_lock() as acquired:
        if not acquired:
            return 0
        # Spread the batch over most of the interval so origins are not hit all at once.
        return sweep(spread=settings.REGISTRY_SWEEP_INTERVAL_SECONDS * 0.8)


@shared_task(name="cards.prune_history", ignore_result=True)
def prune_history() -> int:
    return scheduling.prune_attempts(older_than_days=settings.REGISTRY_ATTEMPT_RETENTION_DAYS)


@shared_task(
    bind=True,
    name="cards.process_import",
    acks_late=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def process_import(self: Task, job_id: str) -> str:
    """List an import's URLs (reading its source document if it has one) and fan out the items.

    Reading the source document is a fetch like a crawl's: it takes its origin's turn."""
    origin = None if self.request.is_eager else imports.listing_origin(job_id=job_id)
    if origin is not None:
        wait = politeness.acquire(origin)
        if wait > 0:
            process_import.apply_async(
                (job_id,), countdown=wait * random.uniform(1.0, 1.5), priority=queue.ASKED
            )
            return "deferred"
        try:
            item_ids = imports.import_list(job_id=job_id)
        finally:
            politeness.release(origin)
    else:
        item_ids = imports.import_list(job_id=job_id)
    for item_id in item_ids:
        import_item.apply_async((item_id,), priority=queue.ASKED)
    return f"{len(item_ids)} items"


@shared_task(
    bind=True,
    name="cards.import_item",
    acks_late=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def import_item(self: Task, item_id: int) -> str:
    """Submit one URL of an import, then crawl it when its origin's turn comes, like any crawl:
    while the origin is busy the task is re-queued (the submission is not repeated)."""
    origin = imports.import_item_submit(item_id=item_id)
    if origin is None:
        return "done"
    if self.request.is_eager:
        return imports.import_item_crawl(item_id=item_id)
    wait = politeness.acquire(origin)
    if wait > 0:
        return _defer(self, (item_id,), wait, queue.ASKED)
    try:
        return imports.import_item_crawl(item_id=item_id)
    finally:
        politeness.release(origin)

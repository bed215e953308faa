"""Writes: submitting agents, crawling them, and checking cards.

Views and tasks call these; nothing here knows about HTTP requests. Every outcome of a crawl
is recorded on the agent row, so a failure is visible in the API and the admin, not only in logs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from cards import pipeline, politeness, queue, scheduling
from cards.discovery import is_origin, origin_of
from cards.models import Agent, AuditEntry
from cards.moderation import agent_restore
from cards.reads import gate
from cards.reads.gate import Viewer
from cards.url_form import InvalidURL, normalise_url
from registry.errors import ProblemError
from registry.http import FetchError, FetchPolicy, FetchResult, check_url

logger = logging.getLogger(__name__)


class TransientCrawlError(Exception):
    """The crawl failed for a reason that may go away (timeout, 5xx, 429): retry later."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


# --- submission ------------------------------------------------------------------------------


def _invalid_url(detail: str) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-url",
        title="Invalid agent URL",
        detail=detail,
        errors=[{"pointer": "/url", "message": detail}],
    )


def submitted_url_check(url: Any) -> str:
    """Normalise a submitted URL and refuse what the fetch policy would refuse."""
    if not isinstance(url, str):
        raise _invalid_url("url must be a string")
    if len(url) > 2048:
        raise _invalid_url("the URL is longer than 2048 characters")
    try:
        normalised = normalise_url(url)
    except InvalidURL as exc:
        raise _invalid_url(str(exc)) from None
    if len(normalised.encode("utf-8")) > 2048:
        raise _invalid_url("the URL is longer than 2048 bytes")
    try:
        check_url(normalised, FetchPolicy.from_settings())
    except FetchError as err:
        raise _invalid_url(err.reason) from None
    return normalised


def _conflict(slug: str, title: str, detail: str) -> ProblemError:
    return ProblemError(
        status=409,
        slug=slug,
        title=title,
        detail=detail,
        errors=[{"pointer": "/url", "message": detail}],
    )


def deleted_by(agent: Agent) -> int | None:
    """The account whose action deleted ``agent`` last (None: unknown, or no account)."""
    actor: int | None = (
        AuditEntry.objects.filter(agent=agent, action="delete")
        .order_by("-created_at", "-id")
        .values_list("actor_id", flat=True)
        .first()
    )
    return actor


def may_revive(user: Any, agent: Agent) -> bool:
    """Staff may restore any deleted agent; its owner only one they deleted themselves.

    A deletion by staff (or with no record of who deleted it) is undone by staff only, and
    nobody else's submission brings an agent back (docs/api.md, "Ownership")."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff:
        return True
    owner = agent.submitted_by_id
    return owner is not None and owner == user.pk and deleted_by(agent) == user.pk


def _existing_check(existing: Agent, user: Any) -> None:
    """A submission of a URL already registered follows the ownership rules, or is a 409."""
    if existing.deleted_at is not None:
        if not may_revive(user, existing):
            raise _conflict(
                "agent-deleted",
                "The agent was deleted",
                "An agent with this URL was deleted; only staff, or its owner if they deleted it "
                "themselves, may bring it back.",
            )
        return
    if user is None:
        return  # the registry itself (the command line, its own card): no account to check
    if not gate.agents(Viewer.of(user)).filter(pk=existing.pk).exists():
        raise _conflict(
            "url-registered",
            "The URL is registered by another account",
            "Another account registered this URL and its agent is not public.",
        )


def registered_agent(normalised: str) -> Agent | None:
    """The agent a URL (in its normal form) names: the one registered with that URL, else the
    first registered whose card was found there (an origin's well-known path, a redirect's
    target). Only that one answers for the URL: a later agent whose card a redirect led to the
    same place never stands in for it (issue 35: Alice's own URL answered with Bob's agent)."""
    named = Agent.objects.filter(url=normalised).first()
    if named is not None:
        return named
    return Agent.objects.filter(card_url=normalised).order_by("created_at", "id").first()


def agent_submit(*, url: Any, user: Any, enqueue: bool = True) -> tuple[Agent, bool]:
    """Register an agent by URL, or return the one already registered for it.

    The URL is compared in its normal form (``cards.url_form``), so another spelling of it is
    the same URL. An existing agent (``registered_agent``) is returned only to someone who may
    see it, and a deleted one comes back only for staff or for its owner who deleted it
    (``may_revive``); otherwise a 409 problem. Returns ``(agent, created)``. Concurrent
    submissions of one URL meet at the unique constraint on ``Agent.url``: the loser reads the
    winner's row.
    """
    normalised = submitted_url_check(url)
    existing = registered_agent(normalised)
    if existing is not None:
        _existing_check(existing, user)
        if existing.deleted_at is not None:
            agent_restore(agent=existing, actor=user)
        return existing, False
    discover = is_origin(normalised)
    try:
        with transaction.atomic():
            agent = Agent.objects.create(
                url=normalised,
                discover=discover,
                card_url="" if discover else normalised,
                submitted_by=user,
                next_crawl_at=timezone.now(),
                # Leased while its first crawl is queued (enqueue_leased_crawl).
                lease_until=timezone.now() + scheduling.LEASE if enqueue else None,
                moderation=(
                    Agent.Moderation.APPROVED
                    if settings.REGISTRY_AUTO_APPROVE
                    else Agent.Moderation.PENDING
                ),
            )
            if enqueue:
                transaction.on_commit(lambda: enqueue_leased_crawl(agent.pk, leased=True))
    except IntegrityError:
        winner = Agent.objects.get(url=normalised)
        _existing_check(winner, user)
        return winner, False
    return agent, True


def enqueue_crawl(
    agent_id: Any, *, countdown: float | None = None, priority: int = queue.ASKED
) -> bool:
    """Queue a crawl; if the broker is down the agent stays due and a later sweep takes it.

    A crawl someone asked for (the default) runs ahead of the periodic sweep's crawls."""
    return queue.send("cards.crawl_agent", str(agent_id), countdown=countdown, priority=priority)


def enqueue_leased_crawl(agent_id: Any, *, leased: bool = False) -> bool:
    """Queue the crawl of a due agent (a new submission, a new manifest entry) and hold its row
    under the sweep's lease meanwhile: the periodic sweep would otherwise claim the same due row
    and crawl it a second time. It is the sweep's own lease, so a crawl lost with its worker is
    the sweep's again when the lease runs out. ``leased``: the row was written with the lease
    (in the transaction that created it, so no sweep could claim it in between). When the broker
    is down the lease is taken back and the agent stays due for a later sweep."""
    if not leased:
        Agent.objects.filter(pk=agent_id).update(lease_until=timezone.now() + scheduling.LEASE)
    if enqueue_crawl(agent_id):
        return True
    Agent.objects.filter(pk=agent_id).update(lease_until=None)
    return False


def enqueue_crawls(
    agent_ids: Sequence[Any], *, countdown: float | None = None, priority: int = queue.PERIODIC
) -> bool:
    """Queue the crawls of several agents as one task that crawls them in turn (one agent: its
    own task); its time limits are the per-crawl ones times the batch's size. Like
    :func:`enqueue_crawl`, the agents stay due when the broker is down."""
    ids = [str(agent_id) for agent_id in agent_ids]
    if len(ids) == 1:
        return enqueue_crawl(ids[0], countdown=countdown, priority=priority)
    return queue.send(
        "cards.crawl_agents",
        ids,
        countdown=countdown,
        priority=priority,
        soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT * len(ids),
        time_limit=settings.CELERY_TASK_TIME_LIMIT * len(ids),
    )


def card_check_url(url: Any) -> tuple[pipeline.CardReport, FetchResult]:
    """Run the pipeline on a card by URL for ``/validate``: the same policy and steps as a
    crawl, nothing stored. A fetch failure is a 422 problem."""
    normalised = submitted_url_check(url)
    # The fetch counts against the target origin's politeness budget, like a crawl's.
    origin = origin_of(normalised)
    wait = politeness.acquire(origin)
    if wait > 0:
        raise ProblemError(
            status=429,
            slug="origin-busy",
            title="The target origin is busy",
            detail="The registry is already fetching from this origin; retry in a moment.",
            extra={"retry_after": math.ceil(wait)},
        )
    try:
        return pipeline.run_url(normalised, discover=is_origin(normalised))
    except FetchError as err:
        raise ProblemError(
            status=422,
            slug="fetch-failed",
            title="The card could not be fetched",
            detail=err.reason,
            extra={"code": err.code},
        ) from None
    finally:
        politeness.release(origin)

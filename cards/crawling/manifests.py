"""An origin's ARD manifest met by a crawl: recorded, deferred, checked again, or withdrawn."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, NoReturn

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from cards import health, manifest_crawling, politeness, scheduling
from cards.crawling.attempts import record_attempt, record_failure
from cards.crawling.ingest import card_ingest
from cards.discovery import origin_of
from cards.models import Agent
from cards.rendering.store import agent_changed, rendering_once
from cards.services import TransientCrawlError
from registry.http import FetchError

log = logging.getLogger("cards.crawling")  # every line of a crawl under one name

MANIFEST_REASON = "This origin publishes an ARD manifest; its agents are listed from it: "
STAND_IN = manifest_crawling.STAND_IN
# What :func:`record_manifest` answers when the origin's own row is one of the manifest's
# agents: its card is read next, in the same crawl.
BOUND = "bound"


def manifest_recheck(agent: Agent, err: FetchError) -> None:
    """The manifest candidate failed in a way that may pass while the card paths were read: the
    next crawl, which asks for the manifest again, comes sooner. As soon as the crawl policy
    allows for a new agent, then after about as long as the agent has existed (5 min, 10, 20,
    ... up to the usual interval), and never before the origin's ``Retry-After``; no row
    remembers the failure, and an agent whose ``ard.json`` always fails costs a few crawls."""
    log.info(
        "crawl of %s: manifest candidate %s: %s; checked again later", agent.pk, err.url, err.reason
    )
    if err.retry_after:
        politeness.postpone(origin_of(agent.url), err.retry_after)
    policy = health.HealthPolicy.from_settings()
    now = timezone.now()
    age = (now - agent.created_at).total_seconds()
    delay = max(min(max(age, policy.min_interval), policy.interval), err.retry_after or 0.0)
    soon = now + timedelta(seconds=min(delay, health.DAY))
    if Agent.objects.filter(pk=agent.pk, next_crawl_at__gt=soon).update(next_crawl_at=soon):
        agent_changed(agent.pk)  # the documents show when it is crawled next


def manifest_deferred(agent: Agent, err: FetchError) -> NoReturn:
    """A manifest candidate failed in a way that may pass: nothing about the agent changes (its
    state, card and visibility stay), the caller retries with backoff. Only the lease moves, so
    the sweep does not start a second crawl while the retry is pending."""
    log.info("crawl of %s deferred: manifest candidate %s: %s", agent.pk, err.url, err.reason)
    wait = min(err.retry_after or 0.0, 86400.0)
    if err.retry_after:
        politeness.postpone(origin_of(agent.url), err.retry_after)
    Agent.objects.filter(pk=agent.pk).update(
        lease_until=timezone.now() + scheduling.LEASE + timedelta(seconds=wait)
    )
    raise TransientCrawlError(
        f"the origin's ARD manifest could not be checked ({err.url}): {err.reason}",
        retry_after=err.retry_after,
    )


def record_manifest(
    origin_agent: Agent, found: manifest_crawling.Found, *, started_at: datetime, fetch_ms: float
) -> str:
    """The origin publishes a manifest: its entries become agents, and the origin's own row
    (not an agent itself) is hidden with a reason pointing at the manifest. A manifest that
    could not be processed is recorded as the origin's error, never left unsaid."""
    try:
        manifest, inline = manifest_crawling.ingest(
            found, owner_id=origin_agent.submitted_by_id, origin_id=origin_agent.pk
        )
        for agent_id, inline_card in inline:
            card_ingest(agent_id=agent_id, result=inline_card)
        if inline:  # re-read with the manifest, never crawled on their own
            Agent.objects.filter(pk__in=[pk for pk, _ in inline]).update(next_crawl_at=None)
        if manifest_crawling.lists_origin(manifest, origin_agent.pk):
            # An entry names the card this row was read from (the manifest appeared after the
            # card had been read): the row is that entry's agent, not the manifest's stand-in.
            return BOUND
    except (OperationalError, InterfaceError):
        raise  # the database went away: the task runs the crawl again
    except Exception as exc:
        log.exception("manifest %s of agent %s could not be processed", found.url, origin_agent.pk)
        record_failure(
            origin_agent.pk,
            FetchError(
                "protocol-error",
                f"the ARD manifest at {found.url} could not be processed ({type(exc).__name__})",
                url=found.url,
                transient=False,
            ),
            started_at=started_at,
            fetch_ms=fetch_ms,
            code="ard.manifest",
        )
        return "error"
    now = timezone.now()
    with transaction.atomic(), rendering_once():
        agent = Agent.objects.select_for_update().get(pk=origin_agent.pk)
        agent.manifest = manifest
        agent.shape = STAND_IN
        agent.name = str(manifest.host.get("displayName") or manifest.origin)[:512]
        agent.description = (
            f"ARD manifest at {manifest.url}: {manifest.agents.exclude(pk=agent.pk).count()} "
            f"A2A agents, {manifest.entry_count} entries in all."
        )
        # The manifest's findings (refused entries among them) are the row's: its owner sees
        # them in the detail's validation section.
        agent.findings = list(manifest.findings)
        severities = [f.get("severity") for f in agent.findings if isinstance(f, dict)]
        agent.error_count = severities.count("error")
        agent.warning_count = severities.count("warning")
        agent.info_count = severities.count("info")
        agent.valid = manifest.status == "ok" and agent.error_count == 0
        agent.status = Agent.Status.OK if manifest.status == "ok" else Agent.Status.ERROR
        agent.last_error = manifest.last_error
        agent.last_error_code = "" if manifest.status == "ok" else "ard.manifest"
        result = found.result
        failure = found.error.status if found.error else None
        agent.last_http_status = result.status if result is not None else failure
        agent.last_crawled_at = now
        agent.fetch_ms = fetch_ms
        if agent.moderation in Agent.PUBLIC_STATES:
            agent.moderation = Agent.Moderation.HIDDEN
            agent.moderation_reason = MANIFEST_REASON + manifest.url
        if result is not None:
            agent.last_success_at = now
            health.after_success(agent, now, max_age=health.max_age_of(result.headers))
        else:
            health.after_failure(agent, now, http_status=agent.last_http_status, retry_after=None)
        agent.save()
        record_attempt(
            agent,
            started_at=started_at,
            outcome="manifest",
            success=result is not None,
            http_status=agent.last_http_status,
            error=found.error,
        )
    return "manifest" if manifest.status == "ok" else "error"


def manifest_withdrawn(agent_id: Any) -> None:
    """The origin no longer publishes a manifest: its own row becomes an agent again."""
    with transaction.atomic(), rendering_once():
        agent = Agent.objects.select_for_update().get(pk=agent_id)
        agent.manifest = None
        if agent.shape == STAND_IN:
            # No longer a manifest's stand-in: the card paths decide what it is now.
            agent.shape = ""
            agent.name = agent.description = ""
            agent.content_sha256 = ""  # the next card is summarised even if it is the old one
        if agent.moderation_reason.startswith(MANIFEST_REASON):
            agent.moderation = Agent.Moderation.APPROVED
            agent.moderation_reason = ""
        agent.save()

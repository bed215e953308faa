"""A 304 answer: the card is unchanged, its crawl state and documents are brought up to date."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from cards import health, trust
from cards.crawling.attempts import record_attempt
from cards.models import Agent, CrawlAttempt, Snapshot
from cards.parsing import parse_card_bytes
from cards.rendering import store
from cards.rendering.partial_updates import CRAWL_STATE, crawl_state_documents
from cards.rendering.store import rendering_once
from cards.rendering.uptime import UPTIME_COUNTS, uptime_counts, uptime_of, uptime_windows
from registry.compiled import OneRow
from registry.http import FetchResult

# What the common 304 reads of the agent row: the crawl state it writes, the fields the health
# and crawl sections are rendered from, and the stored documents it brings up to date. The
# card's own columns (findings, search text, the index arrays) stay in the database.
_NOT_MODIFIED_FIELDS = (
    *CRAWL_STATE, "id", "process_ms", "signature_status", "doc_format", "summary_doc",
    "detail_doc",
)  # fmt: skip


_STARTED_AT = CrawlAttempt._meta.get_field("started_at")


# The common 304's one read under the row lock: the crawl state it writes, and the counts of
# the agent's attempts the health section's uptimes are made of (compiled once per thread).
_NOT_MODIFIED = OneRow(
    lambda pk, month, week: (
        Agent.objects.select_for_update()
        .only(*_NOT_MODIFIED_FIELDS)
        .filter(pk=pk)
        .annotate(**uptime_counts(month, week))
    ),
    pk=Agent._meta.pk,
    month=_STARTED_AT,
    week=_STARTED_AT,
)


def record_not_modified(
    fetched: Agent, result: FetchResult, *, started_at: datetime, fetch_ms: float
) -> str:
    """304: the card is unchanged, but its keys may not be: verify the stored card again.

    ``fetched`` is the agent as the crawl read it before fetching (its signature report,
    snapshot and card URL): the card is the one stored, so nothing else is read for it."""
    agent_id = fetched.pk
    snapshot = report = None
    # Same bytes: an unsigned card stays unsigned, so only signed cards are verified again.
    if fetched.latest_snapshot_id is not None and (fetched.signature or {}).get("signatures"):
        snapshot = Snapshot.objects.get(pk=fetched.latest_snapshot_id)
        parsed = parse_card_bytes(bytes(snapshot.raw))
        report = trust.signature_check(parsed, card_url=fetched.card_url, agent_id=agent_id)
    now = timezone.now()
    with transaction.atomic(), rendering_once():
        uptime = None
        if report is not None:
            # A signed card's report is stored by a full save, which renders every document.
            agent = Agent.objects.select_for_update().get(pk=agent_id)
        else:
            month, week = uptime_windows(now)
            found = _NOT_MODIFIED.get(pk=agent_id, month=month, week=week)
            if found is None:
                raise Agent.DoesNotExist(agent_id)
            agent = found
            # With this attempt, a success inside both windows (it is recorded below).
            counted = (getattr(agent, name) + 1 for name in UPTIME_COUNTS)
            uptime = uptime_of(*counted)
        agent.status = Agent.Status.OK
        agent.last_error = ""
        agent.last_error_code = ""
        agent.last_http_status = 304
        agent.last_crawled_at = now
        agent.last_success_at = now
        agent.fetch_ms = fetch_ms
        agent.updated_at = now
        health.after_success(agent, now, max_age=health.max_age_of(result.headers))
        # A 304 carries the Cache-Control the full answer would (RFC 9110 15.4.5).
        cache_control = {"card_cache_control": (result.headers.get("cache-control") or "")[:512]}
        record_attempt(
            agent, started_at=started_at, outcome="not-modified", success=True, http_status=304
        )
        documents = None if report is not None else crawl_state_documents(agent, uptime)
        if documents is not None:
            # The common 304: the card, its index and its signature are as they were, so the
            # crawl state and the two documents go in one UPDATE (no re-rendering).
            state = {name: getattr(agent, name) for name in CRAWL_STATE}
            Agent.objects.filter(pk=agent.pk).update(**state, **documents, **cache_control)
            store.forget(agent.pk)
        else:
            if report is None:  # documents of an older format, or a move out of "gone"
                full = Agent.objects.get(pk=agent_id)
                for name in CRAWL_STATE:
                    setattr(full, name, getattr(agent, name))
                agent = full
            agent.card_cache_control = cache_control["card_cache_control"]
            trust.record_signature(agent, report, snapshot=snapshot, now=now)
            agent.save()
    return "not-modified"

"""Storing a fetched card: a snapshot when the content is new, its findings and index rows."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from cards import health, hooks, owners, pipeline, trust
from cards.ard import identifiers
from cards.changes import summarise
from cards.crawling.attempts import record_attempt
from cards.indexing import apply_summary, index_card
from cards.models import Agent, Snapshot
from cards.pipeline import CardReport
from cards.rendering import store
from cards.rendering.store import rendering_once
from cards.rendering.uptime import uptime_of
from cards.url_form import normalise_fetched
from registry.compiled import OneRow
from registry.findings import counts
from registry.http import FetchResult


def _apply_report(agent: Agent, report: CardReport, now: datetime) -> None:
    agent.findings = [f.as_dict() for f in report.findings]
    tally = counts(report.findings)
    agent.error_count, agent.warning_count, agent.info_count = (
        tally["error"],
        tally["warning"],
        tally["info"],
    )
    agent.valid = report.valid
    if report.card is None:
        first = next((f for f in report.findings if f.severity == "error"), None)
        agent.status = Agent.Status.ERROR
        agent.last_error = first.message if first else "the document is not an agent card"
        agent.last_error_code = first.code if first else "card.unusable"
    else:
        agent.shape = report.parsed.shape
        agent.status = Agent.Status.OK
        agent.last_error = ""
        agent.last_error_code = ""
        agent.last_success_at = now


# The agent under its row lock, as a crawl that stored a card saves it (compiled once per
# thread: every first crawl runs this read).
_LOCKED = OneRow(lambda pk: Agent.objects.select_for_update().filter(pk=pk), pk=Agent._meta.pk)


def card_ingest(
    *,
    agent_id: Any,
    result: FetchResult,
    fetch_ms: float | None = None,
    started_at: datetime | None = None,
) -> str:
    """Store what a fetch returned: a snapshot when the content is new, findings, index rows.

    A document that does not parse keeps what was indexed before: the agent shows the error and
    its findings, and search keeps answering from the last card that parsed.
    """
    started = time.monotonic()
    report = pipeline.run(
        result.body,
        card_url=result.url,
        lenient_content_type=result.lenient_content_type,
        # Read only if the card is signed: most are not, and it is one query less.
        pinned_jwks=lambda: trust.pinned_jwks(agent_id),
    )
    signature = report.signature
    sha256 = hashlib.sha256(result.body).hexdigest()
    now = timezone.now()
    with transaction.atomic(), rendering_once():
        agent = _LOCKED.get(pk=agent_id)
        if agent is None:
            return "missing"
        # No card stored yet: then the agent has no snapshot, index row, schema use or key of
        # its own (a snapshot is written only here, and the agent then points at it), and
        # nothing is looked up or deleted. No crawl yet: no attempt either (each sets it).
        fresh = agent.latest_snapshot_id is None
        first_crawl = agent.last_crawled_at is None
        # The agent row is locked: no other crawl of it can insert this snapshot meanwhile, so
        # a plain look-up then insert (no savepoint) is enough.
        snapshot = None if fresh else Snapshot.objects.filter(agent=agent, sha256=sha256).first()
        created = snapshot is None
        # The card this one replaces, read only for a new card of an agent that had one.
        previous = agent.latest_snapshot if created else None
        snapshot = snapshot or Snapshot.objects.create(
            agent=agent,
            sha256=sha256,
            raw=result.body,
            content_type=result.headers.get("content-type", "")[:255],
            card_url=result.url[:2048],
            data=report.parsed.data,
            card=report.card,
            shape=report.parsed.shape,
            findings=[f.as_dict() for f in report.findings],
            signature=signature.as_dict() if signature else {},
            changes=summarise(
                previous.card if previous else None,
                report.card,
                old_signature=previous.signature if previous else None,
                new_signature=signature.as_dict() if signature else None,
            ),
            fetched_at=now,
        )
        changed = agent.latest_snapshot_id != snapshot.pk
        if report.card is not None and (changed or agent.content_sha256 != sha256):
            apply_summary(agent, report.card)
            # The rows just written are what the documents are rendered from: no re-reading.
            store.preload(
                agent,
                index_card(agent, report.card, fresh=fresh),
                # A first crawl's only attempt is its success, recorded below.
                uptime=uptime_of(1, 1, 1, 1) if first_crawl else None,
                keys=[] if fresh and not trust.adds_keys(signature) else None,
            )
            for step in hooks.index_steps:  # schemas_app: the schema index and its history
                step(agent=agent, card=report.card, snapshot=snapshot, fresh=fresh)
            # Its text may have changed: search embeds it once this commits.
            hooks.text_changed([str(agent.pk)])
        agent.latest_snapshot = snapshot
        agent.content_sha256 = sha256
        # Where the card was found, in the normal form: submissions and manifests compare it.
        card_url = normalise_fetched(result.url)
        agent.card_url = card_url[:2048]
        owners.apply_publisher(agent, card_url)  # the verified publisher of its origin owns it
        _apply_report(agent, report, now)
        if report.card is not None and not agent.ard_identifier:
            identifiers.assign(agent, identifiers.derived(card_url, agent.name), source="derived")
        agent.last_http_status = result.status
        agent.last_crawled_at = now
        agent.fetch_ms = fetch_ms
        agent.process_ms = (time.monotonic() - started) * 1000
        agent.etag = (result.etag or "")[:512]
        agent.last_modified = (result.last_modified or "")[:128]
        agent.card_cache_control = (result.headers.get("cache-control") or "")[:512]
        health.after_success(agent, now, max_age=health.max_age_of(result.headers))
        trust.record_signature(agent, signature, snapshot=snapshot, now=now)
        agent.save()
        record_attempt(
            agent,
            started_at=started_at or now,
            outcome="stored" if created else "unchanged",
            success=True,
            http_status=result.status,
            size=len(result.body),
        )
    return "stored" if created else "unchanged"

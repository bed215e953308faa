"""Crawling one agent: fetch, check, verify, store, index, and record the outcome.

Every outcome lands on the agent row (status, health, last error, timings, next crawl) and as a
``CrawlAttempt``; nothing important lives only in logs. Network work (the card, JWKS documents)
happens before the transaction that writes, so no row lock is held while waiting on a server.
"""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import datetime, timedelta
from typing import Any, NoReturn

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from cards import health, hooks, manifest_crawling, owners, pipeline, politeness, scheduling, trust
from cards.ard import identifiers
from cards.changes import summarise
from cards.crawl_metrics import observed_crawl
from cards.discovery import origin_of
from cards.embedding import pending as embedding_pending
from cards.indexing import apply_summary, index_card
from cards.models import Agent, CrawlAttempt, Manifest, Snapshot
from cards.parsing import parse_card_bytes
from cards.pipeline import CardReport, fetch_card
from cards.rendering import store
from cards.rendering.store import agent_changed, rendering_once
from cards.services import TransientCrawlError
from cards.url_form import normalise_fetched
from registry.compiled import OneRow
from registry.findings import counts
from registry.http import FetchError, FetchResult
from registry.http.errors import REGISTRY_LIMIT_CODES

log = logging.getLogger(__name__)


def _conditional_headers(agent: Agent) -> dict[str, str]:
    if agent.latest_snapshot_id is None:
        return {}
    headers: dict[str, str] = {}
    if agent.etag:
        headers["If-None-Match"] = agent.etag
    if agent.last_modified:
        headers["If-Modified-Since"] = agent.last_modified
    return headers


def _attempt(
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


_TARGET = OneRow(
    lambda pk: Agent.objects.filter(pk=pk).only(
        "id", "url", "discover", "card_url", "etag", "last_modified", "latest_snapshot",
        "submitted_by", "manifest", "ard_entry", "signature", "shape", "created_at",
    ),
    pk=Agent._meta.pk,
)  # fmt: skip


def crawl_target(agent_id: Any) -> Agent | None:
    """What a crawl reads of the agent before it fetches; the stored documents and findings stay
    in the database (the task reads it once, for the politeness gate and the crawl). Compiled
    once per thread (registry/compiled.py): every crawl runs this read."""
    return _TARGET.get(pk=agent_id)


@observed_crawl  # every crawl in the metrics, by outcome (cards/crawl_metrics.py)
def agent_crawl(*, agent_id: Any, final: bool = False, agent: Agent | None = None) -> str:
    """Fetch, parse, validate, verify and index one agent's card. Idempotent.

    Returns the outcome (``stored``, ``unchanged``, ``not-modified``, ``manifest``, ``error``,
    ``missing``). Raises :class:`TransientCrawlError` after recording a failure that is worth
    retrying. An origin is first asked for its ARD manifest (docs/ard.md); when a candidate
    fails transiently, nothing is concluded about a manifest: the card paths are read in the
    same crawl and the manifest is checked again by a crawl brought forward
    (:func:`_manifest_recheck`). Only a row that stands for a known manifest (no card of its
    own) waits for the task's retry instead; ``final`` (the last try the caller will make) then
    records the failure on that manifest. ``agent``: the :func:`crawl_target` of ``agent_id``
    when the caller has read it already.
    """
    agent = agent if agent is not None else crawl_target(agent_id)
    if agent is None:
        return "missing"
    if agent.manifest_id is not None and (agent.ard_entry or {}).get("inline") is True:
        # A card inline in a manifest (a ``data`` entry) has no URL of its own to fetch: its
        # manifest's crawl re-reads it. Fetching ``<manifest>#<id>`` would read the manifest.
        Agent.objects.filter(pk=agent.pk).update(next_crawl_at=None, lease_until=None)
        return "inline"
    started_at = timezone.now()
    started = time.monotonic()
    recheck: FetchError | None = None
    if agent.discover:
        # ARD first: an origin that publishes a manifest lists its agents there (docs/ard.md).
        known = Manifest.objects.filter(pk=agent.manifest_id).first() if agent.manifest_id else None
        known = known if manifest_crawling.was_read(known) else None
        resolution = manifest_crawling.resolve(origin_of(agent.url), known=known)
        found = resolution.found
        if resolution.transient is not None:
            if known is not None and agent.shape == STAND_IN:
                # The row stands for a manifest and has no card of its own to read meanwhile.
                if not final:
                    _manifest_deferred(agent, resolution.transient)
                found = manifest_crawling.Found(
                    url=known.url, via=known.found_via, error=resolution.transient
                )
            else:
                recheck = resolution.transient  # a failure to fetch is no evidence either way
        if found is not None:
            outcome = _record_manifest(agent, found, started_at=started_at, fetch_ms=_ms(started))
            if outcome != BOUND:
                return outcome
        elif agent.manifest_id is not None and recheck is None:
            _manifest_withdrawn(agent.pk)
            agent.etag = agent.last_modified = ""  # the card is read in full, not revalidated
    outcome = _card_crawl(agent, started_at=started_at, started=started)
    if recheck is not None:
        _manifest_recheck(agent, recheck)
    return outcome


def _card_crawl(agent: Agent, *, started_at: datetime, started: float) -> str:
    """The card itself: at the agent's URL, or found on the origin's card paths."""
    try:
        result = fetch_card(agent.url, discover=agent.discover, headers=_conditional_headers(agent))
    except FetchError as err:
        if err.code in REGISTRY_LIMIT_CODES:
            return _deferred_by_gate(agent.pk, err)
        _record_failure(agent.pk, err, started_at=started_at, fetch_ms=_ms(started))
        if err.retry_after:
            politeness.postpone(origin_of(agent.card_url or agent.url), err.retry_after)
        if err.transient:
            raise TransientCrawlError(err.reason, retry_after=err.retry_after) from err
        return "error"
    if result.not_modified:
        return _record_not_modified(agent, result, started_at=started_at, fetch_ms=_ms(started))
    found_at = normalise_fetched(result.url)
    if owners.holder_of(agent, found_at) is not None:  # a redirect to another agent's URL
        refused = FetchError(
            "redirect-refused",
            owners.REGISTERED_ELSEWHERE_REASON.format(url=found_at),
            url=result.url,
            transient=False,
            status=result.status,
        )
        code = owners.REGISTERED_ELSEWHERE
        _record_failure(agent.pk, refused, started_at=started_at, fetch_ms=_ms(started), code=code)
        return "error"
    return card_ingest(
        agent_id=agent.pk, result=result, fetch_ms=_ms(started), started_at=started_at
    )


DEFERRED = "deferred"


def _deferred_by_gate(agent_id: Any, err: FetchError) -> str:
    """The registry's own politeness gate refused the fetch (registry/http/gate.py): the
    destination did nothing, so nothing about the agent changes but when it is crawled next
    (when its destination's turn or hour comes; the sweep picks it up then)."""
    log.info("crawl of %s deferred by the politeness gate: %s", agent_id, err.reason)
    later = timezone.now() + timedelta(seconds=max(err.retry_after or 0.0, 1.0))
    Agent.objects.filter(pk=agent_id).update(next_crawl_at=later, lease_until=None)
    return DEFERRED


def _manifest_recheck(agent: Agent, err: FetchError) -> None:
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


MANIFEST_REASON = "This origin publishes an ARD manifest; its agents are listed from it: "
STAND_IN = manifest_crawling.STAND_IN
# What :func:`_record_manifest` answers when the origin's own row is one of the manifest's
# agents: its card is read next, in the same crawl.
BOUND = "bound"


def _manifest_deferred(agent: Agent, err: FetchError) -> NoReturn:
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


def _record_manifest(
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
        _record_failure(
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
        _attempt(
            agent,
            started_at=started_at,
            outcome="manifest",
            success=result is not None,
            http_status=agent.last_http_status,
            error=found.error,
        )
    return "manifest" if manifest.status == "ok" else "error"


def _manifest_withdrawn(agent_id: Any) -> None:
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


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


def _record_failure(
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
        _attempt(
            agent,
            started_at=started_at,
            outcome="error",
            success=False,
            http_status=err.status,
            error=err,
            code=code,
        )


# What the common 304 reads of the agent row: the crawl state it writes, the fields the health
# and crawl sections are rendered from, and the stored documents it brings up to date. The
# card's own columns (findings, search text, the index arrays) stay in the database.
_NOT_MODIFIED_FIELDS = (
    *store.CRAWL_STATE, "id", "process_ms", "signature_status", "doc_format", "summary_doc",
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
        .annotate(**store.uptime_counts(month, week))
    ),
    pk=Agent._meta.pk,
    month=_STARTED_AT,
    week=_STARTED_AT,
)


def _record_not_modified(
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
            month, week = store.uptime_windows(now)
            found = _NOT_MODIFIED.get(pk=agent_id, month=month, week=week)
            if found is None:
                raise Agent.DoesNotExist(agent_id)
            agent = found
            # With this attempt, a success inside both windows (it is recorded below).
            counted = (getattr(agent, name) + 1 for name in store.UPTIME_COUNTS)
            uptime = store.uptime_of(*counted)
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
        _attempt(
            agent, started_at=started_at, outcome="not-modified", success=True, http_status=304
        )
        documents = None if report is not None else store.crawl_state_documents(agent, uptime)
        if documents is not None:
            # The common 304: the card, its index and its signature are as they were, so the
            # crawl state and the two documents go in one UPDATE (no re-rendering).
            state = {name: getattr(agent, name) for name in store.CRAWL_STATE}
            Agent.objects.filter(pk=agent.pk).update(**state, **documents, **cache_control)
            store.forget(agent.pk)
        else:
            if report is None:  # documents of an older format, or a move out of "gone"
                full = Agent.objects.get(pk=agent_id)
                for name in store.CRAWL_STATE:
                    setattr(full, name, getattr(agent, name))
                agent = full
            agent.card_cache_control = cache_control["card_cache_control"]
            trust.record_signature(agent, report, snapshot=snapshot, now=now)
            agent.save()
    return "not-modified"


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
                uptime=store.uptime_of(1, 1, 1, 1) if first_crawl else None,
                keys=[] if fresh and not trust.adds_keys(signature) else None,
            )
            for step in hooks.index_steps:  # schemas_app: the schema index and its history
                step(agent=agent, card=report.card, snapshot=snapshot, fresh=fresh)
            # Its text may have changed: embed it for semantic search once this commits.
            embedding_pending.embed_after_commit([str(agent.pk)])
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
        _attempt(
            agent,
            started_at=started_at or now,
            outcome="stored" if created else "unchanged",
            success=True,
            http_status=result.status,
            size=len(result.body),
        )
    return "stored" if created else "unchanged"

"""One agent's crawl: its ARD manifest first, then its card, and what the outcome was."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from cards import manifest_crawling, owners, politeness
from cards.crawl_metrics import observed_crawl
from cards.crawling.attempts import elapsed_ms, record_failure
from cards.crawling.ingest import card_ingest
from cards.crawling.manifests import (
    BOUND,
    STAND_IN,
    manifest_deferred,
    manifest_recheck,
    manifest_withdrawn,
    record_manifest,
)
from cards.crawling.not_modified import record_not_modified
from cards.discovery import origin_of
from cards.models import Agent, Manifest
from cards.pipeline import fetch_card
from cards.services import TransientCrawlError
from cards.url_form import normalise_fetched
from registry.compiled import OneRow
from registry.http import FetchError
from registry.http.errors import REGISTRY_LIMIT_CODES

log = logging.getLogger("cards.crawling")  # every line of a crawl under one name


def _conditional_headers(agent: Agent) -> dict[str, str]:
    if agent.latest_snapshot_id is None:
        return {}
    headers: dict[str, str] = {}
    if agent.etag:
        headers["If-None-Match"] = agent.etag
    if agent.last_modified:
        headers["If-Modified-Since"] = agent.last_modified
    return headers


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
    (:func:`manifest_recheck`). Only a row that stands for a known manifest (no card of its
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
                    manifest_deferred(agent, resolution.transient)
                found = manifest_crawling.Found(
                    url=known.url, via=known.found_via, error=resolution.transient
                )
            else:
                recheck = resolution.transient  # a failure to fetch is no evidence either way
        if found is not None:
            outcome = record_manifest(
                agent, found, started_at=started_at, fetch_ms=elapsed_ms(started)
            )
            if outcome != BOUND:
                return outcome
        elif agent.manifest_id is not None and recheck is None:
            manifest_withdrawn(agent.pk)
            agent.etag = agent.last_modified = ""  # the card is read in full, not revalidated
    outcome = _card_crawl(agent, started_at=started_at, started=started)
    if recheck is not None:
        manifest_recheck(agent, recheck)
    return outcome


def _card_crawl(agent: Agent, *, started_at: datetime, started: float) -> str:
    """The card itself: at the agent's URL, or found on the origin's card paths."""
    try:
        result = fetch_card(agent.url, discover=agent.discover, headers=_conditional_headers(agent))
    except FetchError as err:
        if err.code in REGISTRY_LIMIT_CODES:
            return _deferred_by_gate(agent.pk, err)
        record_failure(agent.pk, err, started_at=started_at, fetch_ms=elapsed_ms(started))
        if err.retry_after:
            politeness.postpone(origin_of(agent.card_url or agent.url), err.retry_after)
        if err.transient:
            raise TransientCrawlError(err.reason, retry_after=err.retry_after) from err
        return "error"
    if result.not_modified:
        return record_not_modified(
            agent, result, started_at=started_at, fetch_ms=elapsed_ms(started)
        )
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
        record_failure(
            agent.pk, refused, started_at=started_at, fetch_ms=elapsed_ms(started), code=code
        )
        return "error"
    return card_ingest(
        agent_id=agent.pk, result=result, fetch_ms=elapsed_ms(started), started_at=started_at
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

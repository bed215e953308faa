"""Stored documents brought up to date in place, without a full rendering: after a 304 (the
crawl state) and after the live checks (their report)."""

from __future__ import annotations

import json
from typing import Any

from cards.models import Agent
from cards.rendering import documents as rendered
from cards.rendering.documents import Uptime
from cards.rendering.store import DOC_FORMAT, json_text
from cards.rendering.uptime import uptimes

# Fields of the agent row a crawl outcome changes without touching the card or its index.
CRAWL_STATE = (
    "status",
    "last_error",
    "last_error_code",
    "last_http_status",
    "last_crawled_at",
    "last_success_at",
    "fetch_ms",
    "health",
    "consecutive_failures",
    "gone_since",
    "lease_until",
    "next_crawl_at",
    "updated_at",
)


def crawl_state_documents(agent: Agent, uptime: Uptime | None = None) -> dict[str, Any] | None:
    """The stored documents of ``agent`` with only its crawl state brought up to date (a 304:
    same card, same index), as column values to UPDATE together with that state. None when a
    full rendering is needed instead: documents of an older format, or a move into or out of
    ``gone``, which changes what the facet counts include. ``uptime``: the agent's, when the
    caller has counted it already (else it is read)."""
    if agent.doc_format != DOC_FORMAT or not agent.summary_doc or not agent.detail_doc:
        return None
    summary = json.loads(agent.summary_doc)
    detail = json.loads(agent.detail_doc)
    gone = Agent.Health.GONE
    if ((summary.get("health") or {}).get("state") == gone) != (agent.health == gone):
        return None
    when = rendered.when
    if uptime is None:
        uptime = uptimes([agent.pk]).get(agent.pk, (None, None))
    # A 304 leaves the live checks' report as it was: the endpoint is the stored one.
    endpoint = (summary.get("health") or {}).get("endpoint") or "not-checked"
    health = rendered.health_section(agent, uptime, endpoint)
    crawl = rendered.crawl_section(agent)
    summary.update(
        status=agent.status,
        health=health,
        crawl=crawl,
        signature_status=agent.signature_status or None,
        last_crawled_at=when(agent.last_crawled_at),
    )
    detail.update(status=agent.status, updated_at=when(agent.updated_at))
    detail["health"] = health
    detail["crawl"] = crawl
    return {"summary_doc": json_text(summary), "detail_doc": json_text(detail)}


# What :func:`live_documents` reads of the agent row besides the live fields it is given.
LIVE_STATE = ("id", "doc_format", "summary_doc", "detail_doc", "probe_messages", "updated_at")


def live_documents(agent: Agent) -> dict[str, Any] | None:
    """The stored documents of ``agent`` with only the live checks' parts brought up to date
    (``live`` and ``health.endpoint``; the detail's ``updated_at``), as column values to UPDATE
    with the report. None when a full rendering is needed (documents of an older format)."""
    if agent.doc_format != DOC_FORMAT or not agent.summary_doc or not agent.detail_doc:
        return None
    summary = json.loads(agent.summary_doc)
    detail = json.loads(agent.detail_doc)
    endpoint = (agent.live or {}).get("endpoint") or rendered.NOT_CHECKED
    summary["live"] = rendered.live_outcome(agent)
    detail["live"] = rendered.live_section(agent)
    for document in (summary, detail):
        if isinstance(document.get("health"), dict):
            document["health"]["endpoint"] = endpoint
    detail["updated_at"] = rendered.when(agent.updated_at)
    return {"summary_doc": json_text(summary), "detail_doc": json_text(detail)}

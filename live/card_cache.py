"""CARD-CACHE-001/002: the card URL's caching headers, read from the crawl's own answer.

The crawl fetched the card moments before (and keeps its ``ETag`` and ``Cache-Control`` on the
agent row), so the live run sends no GET of its own: the agent's host sees one request for its
card, not two. Spec 8.6.1: the card SHOULD be served with ``Cache-Control`` carrying a
``max-age`` directive, and SHOULD carry an ``ETag``.
"""

from __future__ import annotations

import re
from typing import Any

from live.report import PASS, SHOULD, SKIP, WARN, Check

TITLES = {
    "CARD-CACHE-001": "The card is served with Cache-Control and max-age",
    "CARD-CACHE-002": "The card is served with an ETag",
}
_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?\d+", re.IGNORECASE)


def _row(check_id: str, outcome: str, detail: str) -> Check:
    return Check(id=check_id, title=TITLES[check_id], level=SHOULD, outcome=outcome, detail=detail)


def cache_control_row(value: str) -> Check:
    if not value:
        return _row("CARD-CACHE-001", WARN, "no Cache-Control header")
    if _MAX_AGE.search(value):
        return _row("CARD-CACHE-001", PASS, f"Cache-Control: {value}")
    detail = f"Cache-Control: {value} has no max-age directive (spec 8.6.1 asks for one)"
    return _row("CARD-CACHE-001", WARN, detail)


def card_cache_checks(agent: Any) -> list[Check]:
    """Both checks from the headers the last crawl kept; ``skip`` where it kept none."""
    if (agent.ard_entry or {}).get("inline") is True:
        reason = "the card is inline in its ARD manifest: it has no URL of its own"
        return [_row(i, SKIP, reason) for i in TITLES]
    if agent.card_cache_control is None:
        reason = "not judged yet: the crawl keeps the card's headers from its next read"
        return [_row(i, SKIP, reason) for i in TITLES]
    etag = agent.etag
    tag = _row("CARD-CACHE-002", PASS, f"ETag: {etag}") if etag else None
    return [
        cache_control_row(agent.card_cache_control),
        tag or _row("CARD-CACHE-002", WARN, "no ETag header"),
    ]

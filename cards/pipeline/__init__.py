"""The ingest pipeline's one home: database-free steps, in the order of DESIGN.md section 3.

    fetch (with discovery) -> parse -> validate -> verify signatures -> check schemas

:func:`run` takes bytes and returns one :class:`CardReport` (findings of the card rules and of
every registered check, such as the embedded schemas, and the signature report); :func:`run_url`
fetches first. The crawl (``cards.crawling``), ``POST /api/v1/validate`` and bulk imports all
call these; writing what a report says (snapshot, index, history, health) is the services' job.
Pinned keys come from the caller, which may read them from the database (or pass a function that
does, called only for a signed card); nothing here does.
"""

from __future__ import annotations

from typing import Any

from cards.pipeline.check import check, rule_context
from cards.pipeline.fetch import fetch_card
from cards.pipeline.report import CardReport
from cards.pipeline.verify import PinnedJwks, verify
from registry.http import FetchResult

__all__ = ["CardReport", "check", "fetch_card", "rule_context", "run", "run_url", "verify"]


def run(
    raw: bytes,
    *,
    card_url: str = "",
    lenient_content_type: bool = False,
    pinned_jwks: PinnedJwks = None,
) -> CardReport:
    """Parse, validate (card rules and registered checks) and verify one card document."""
    report = check(raw=raw, lenient_content_type=lenient_content_type)
    report.signature = verify(report.parsed, card_url=card_url, pinned_jwks=pinned_jwks)
    return report


def run_url(
    url: str,
    *,
    discover: bool,
    headers: dict[str, str] | None = None,
    pinned_jwks: dict[str, Any] | None = None,
) -> tuple[CardReport, FetchResult]:
    """Fetch (discovering an origin's card) and :func:`run` on what came back.

    Raises :class:`registry.http.FetchError` when nothing usable could be fetched. (The crawl,
    which sends conditional headers and may get a 304, calls the steps one by one.)"""
    result = fetch_card(url, discover=discover, headers=headers)
    report = run(
        result.body,
        card_url=result.url,
        lenient_content_type=result.lenient_content_type,
        pinned_jwks=pinned_jwks,
    )
    return report, result

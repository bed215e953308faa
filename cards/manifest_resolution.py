"""Where an origin's ARD manifest is, if it publishes one (ARD 5.1; docs/ard.md).

Candidates in ARD's order: ``/.well-known/ard.json``, a ``rel="ard"`` link on the origin's home
page, ``/.well-known/ai-catalog.json`` (and ``rel="ai-catalog"``). Only a 2xx answer that reads
as a manifest is one; a transient failure of a candidate concludes nothing, and the caller
decides what to do meanwhile (cards/crawling/crawl.py reads the card paths and asks again later).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from urllib.parse import urljoin

from django.conf import settings

from cards.ard.manifest import ManifestReport, read
from cards.models import Manifest
from cards.url_form import normalise_fetched
from registry.http import FetchError, FetchPolicy, FetchResult, fetch

log = logging.getLogger(__name__)
WELL_KNOWN = (("/.well-known/ard.json", "well-known-ard"),)
FALLBACK = (("/.well-known/ai-catalog.json", "well-known-ai-catalog"),)
HOME_PAGE_BYTES = 256 * 1024


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "link":
            return
        values = {k.lower(): (v or "") for k, v in attrs}
        for rel in values.get("rel", "").lower().split():
            if rel in ("ard", "ai-catalog") and values.get("href"):
                self.found.setdefault(rel, values["href"])


def _links(origin: str, policy: FetchPolicy) -> tuple[dict[str, str], FetchError | None]:
    """``rel="ard"`` and ``rel="ai-catalog"`` links on the origin's home page, and the error
    when the page could not be fetched (no links then)."""
    small = replace(policy, max_bytes=min(policy.max_bytes, HOME_PAGE_BYTES))
    try:
        page = fetch(origin + "/", policy=small, expect_json=False)
    except FetchError as err:
        return {}, err
    parser = _Links()
    try:
        parser.feed(page.body.decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - a broken page has no links
        return {}, None
    return {rel: urljoin(page.url, href) for rel, href in parser.found.items()}, None


@dataclass
class Found:
    """A manifest (a 2xx answer that reads as one), or the failure to read a manifest the
    origin is known to publish (``error``, or a ``report`` that is not ok)."""

    url: str
    via: str
    result: FetchResult | None = None
    error: FetchError | None = None
    report: ManifestReport | None = None


@dataclass
class Resolution:
    """What looking for an origin's manifest came to. ``found``: a manifest (or the known
    manifest's failure); ``transient``: a candidate failed in a way that may pass (DNS, connect,
    timeout, 5xx, 408, 429), so nothing can be concluded; neither: the origin publishes none.
    ``absent`` says why each candidate was not one (for the logs)."""

    found: Found | None = None
    transient: FetchError | None = None
    absent: list[str] = field(default_factory=list)


def was_read(manifest: Manifest | None) -> bool:
    """A manifest the registry has read successfully at least once: once an origin has one,
    only 404/410 withdraws it, and other failures are recorded on it."""
    if manifest is None:
        return False
    return manifest.status == "ok" or bool(
        manifest.spec_version or manifest.entry_count or manifest.type_counts
    )


def _is_known(known: Manifest | None, via: str, *urls: str) -> bool:
    return known is not None and (
        known.found_via == via or known.url in {normalise_fetched(url) for url in urls}
    )


def _try(url: str, via: str, policy: FetchPolicy, known: Manifest | None, out: Resolution) -> bool:
    """Try one candidate; True when the search stops here. Only a 2xx answer that reads as a
    manifest is one; 404/410, other 4xx, a refused address or a document that is not a
    manifest mean "none here" (unless it is the manifest the origin is known to publish)."""
    try:
        result = fetch(url, policy=policy)
    except FetchError as err:
        if err.transient:
            log.info("manifest candidate %s: transient failure: %s", url, err.reason)
            out.transient = err
            return True
        if (
            err.status not in (404, 410)
            and known is not None
            and _is_known(known, via, url, err.url)
        ):
            out.found = Found(url=known.url, via=known.found_via or via, error=err)
            return True
        out.absent.append(f"{url}: {err.reason}")
        return False
    report = read(
        result.body, manifest_url=result.url, max_entries=settings.REGISTRY_ARD_MAX_ENTRIES
    )
    if report.ok:
        out.found = Found(url=result.url, via=via, result=result, report=report)
        return True
    if known is not None and _is_known(known, via, url, result.url):
        out.found = Found(url=known.url, via=known.found_via or via, result=result, report=report)
        return True
    first = next((f.message for f in report.findings if f.severity == "error"), "not a manifest")
    out.absent.append(f"{url}: {first}")
    return False


def resolve(
    origin: str, policy: FetchPolicy | None = None, *, known: Manifest | None = None
) -> Resolution:
    """Look for the origin's manifest, in ARD's order. ``known``: the manifest the origin was
    last seen publishing (see :func:`was_read`)."""
    policy = policy or FetchPolicy.from_settings()
    out = Resolution()
    for path, via in WELL_KNOWN:
        if _try(origin + path, via, policy, known, out):
            return out
    links, page_error = _links(origin, policy)
    if page_error is not None and page_error.transient and known is not None:
        # The known manifest may be the one the page links to: nothing can be concluded.
        out.transient = page_error
        return out
    if "ard" in links and _try(links["ard"], "link-ard", policy, known, out):
        return out
    for path, via in FALLBACK:
        if _try(origin + path, via, policy, known, out):
            return out
    if "ai-catalog" in links:
        _try(links["ai-catalog"], "link-ai-catalog", policy, known, out)
    if out.absent and out.found is None and out.transient is None:
        log.info("no ARD manifest at %s: %s", origin, "; ".join(out.absent))
    return out

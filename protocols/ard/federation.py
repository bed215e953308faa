"""ARD federation (5.4): referrals to peer registries, or asking them (``auto``) within a
deadline through the safe fetcher, merging their results with ours, each keeping its source."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from cards.ard.identifiers import URN
from registry.http import FetchError, FetchPolicy, fetch

log = logging.getLogger(__name__)
MODES = ("auto", "referrals", "none")
REGISTRY_TYPE = "application/ai-registry+json"


def peers() -> list[str]:
    return [url.rstrip("/") + "/" for url in settings.REGISTRY_ARD_PEERS if url.strip()]


def referrals() -> list[dict[str, Any]]:
    out = []
    for url in peers():
        host = (urlsplit(url).hostname or "peer").lower().replace(":", "-")
        out.append(
            {
                "identifier": f"urn:air:{host}:registry:peer",
                "displayName": f"Agent registry at {host}",
                "type": REGISTRY_TYPE,
                "url": url,
            }
        )
    return out


def _clean(item: Any, peer: str) -> dict[str, Any] | None:
    """A peer's result, if it is one: an entry with an identifier, a name, a type, a score."""
    if not isinstance(item, dict):
        return None
    identifier, name, kind = item.get("identifier"), item.get("displayName"), item.get("type")
    score = item.get("score")
    if not (isinstance(identifier, str) and URN.match(identifier)):
        return None
    if not (isinstance(name, str) and isinstance(kind, str)):
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 100:
        return None
    if ("url" in item) == ("data" in item):
        return None
    out = dict(item)
    out["score"] = int(round(score))
    source = item.get("source")
    out["source"] = source if isinstance(source, str) and source else peer
    return out


def _ask(peer: str, request: dict[str, Any], policy: FetchPolicy) -> list[dict[str, Any]]:
    body = json.dumps({**request, "federation": "none"}).encode()
    result = fetch(peer + "search", policy=policy, method="POST", content=body)
    data = json.loads(result.body)
    items = data.get("results") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [clean for clean in (_clean(item, peer) for item in items[:100]) if clean]


def ask_peers(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Results from every peer that answers within the deadline; the others are logged."""
    targets = peers()
    if not targets:
        return []
    deadline = settings.REGISTRY_ARD_FEDERATION_TIMEOUT
    policy = replace(
        FetchPolicy.from_settings(),
        total_timeout=deadline,
        connect_timeout=min(deadline, 5.0),
        read_timeout=min(deadline, 10.0),
        max_bytes=512 * 1024,
    )
    pool = ThreadPoolExecutor(max_workers=min(8, len(targets)))
    futures = {pool.submit(_ask, peer, request, policy): peer for peer in targets}
    done, late = wait(futures, timeout=deadline + 0.25)
    pool.shutdown(wait=False, cancel_futures=True)
    found: list[dict[str, Any]] = []
    for future in done:
        try:
            found.extend(future.result())
        except (FetchError, ValueError) as exc:
            log.info("ARD peer %s did not answer usefully: %s", futures[future], exc)
    for future in late:
        log.info("ARD peer %s missed the %.1f s deadline", futures[future], deadline)
    return found


def merge(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ours and the peers' results by score (ours first on a tie); an identifier we hold
    ourselves is not repeated from a peer."""
    seen = {item["identifier"] for item in ours}
    merged = list(ours)
    for item in theirs:
        if item["identifier"] not in seen:
            seen.add(item["identifier"])
            merged.append(item)
    order = {id(item): n for n, item in enumerate(merged)}
    return sorted(merged, key=lambda item: (-item["score"], order[id(item)]))

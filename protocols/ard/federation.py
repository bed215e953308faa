"""ARD federation (5.4): referrals to peer registries, or asking them (``auto``) within a
deadline through the safe fetcher, merging their results with ours, each keeping its source."""

from __future__ import annotations

import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from cards.ard.identifiers import URN
from cards.reads import params
from cards.url_form import normalise_fetched
from registry.http import FetchError, FetchPolicy, fetch

log = logging.getLogger(__name__)
MODES = ("auto", "referrals", "none")
REGISTRY_TYPE = "application/ai-registry+json"


def peers() -> list[str]:
    """The peer registries' base URLs, each once however it is spelled in the settings."""
    found: dict[str, None] = {}
    for url in settings.REGISTRY_ARD_PEERS:
        if url.strip():
            found[normalise_fetched(url.strip()).rstrip("/") + "/"] = None
    return list(found)


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


# What a peer's result may carry: the members of our own projections (protocols/ard/entries.py),
# each checked as we check our own; anything else is dropped. Limits match the stored columns.
MAX_IDENTIFIER = 512
MAX_NAME = 512
MAX_URL = 2048
MAX_TYPE = 255
MAX_DESCRIPTION = 4000
MAX_VERSION = 128
MAX_LIST = 100
MAX_TOKEN = 200
MAX_METADATA = 32
MAX_INLINE = 64 * 1024
_MEDIA_TYPE = re.compile(r"^[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*$")
# C0/C1 controls (tabs and newlines too: none belongs in a name, a URL or a token), and the
# characters that start markup in a name a client may put into a page.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MARKUP = re.compile(r"[<>]")


def _text(value: Any, limit: int, *, lines: bool = False) -> str | None:
    """A non-empty string of at most ``limit`` characters, without control characters (with
    ``lines``, tabs and line breaks are allowed); None otherwise."""
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        return None
    checked = value.replace("\n", " ").replace("\r", " ").replace("\t", " ") if lines else value
    return None if _CONTROL.search(checked) else value


def web_url(value: Any) -> str | None:
    """An absolute http(s) URL with a host, as our own results carry; None otherwise (so no
    ``javascript:``, ``data:`` or relative URL reaches a client from a peer)."""
    text = _text(value, MAX_URL)
    if text is None or any(c.isspace() for c in text):
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return text


def _tokens(value: Any) -> list[str] | None:
    if not isinstance(value, list) or len(value) > MAX_LIST:
        return None
    out = [_text(item, MAX_TOKEN) for item in value]
    return None if any(item is None for item in out) else [item for item in out if item]


def _metadata(value: Any) -> dict[str, Any] | None:
    """ai-catalog metadata: a small object of scalar values."""
    if not isinstance(value, dict) or len(value) > MAX_METADATA:
        return None
    out: dict[str, Any] = {}
    for key, item in value.items():
        if _text(key, MAX_TOKEN) is None:
            return None
        if isinstance(item, str):
            if _text(item, MAX_URL) is None:
                return None
        elif item is not None and not isinstance(item, bool | int | float):
            return None
        out[key] = item
    return out


def _clean(item: Any, peer: str) -> dict[str, Any] | None:
    """A peer's result checked like one of ours, or None to drop it: an identifier, a plain
    display name (no markup), a media type, a score from 0 to 100 and either an http(s) ``url``
    or inline ``data``. Optional members that fail their check are left out; unknown ones too."""
    if not isinstance(item, dict):
        return None
    identifier = _text(item.get("identifier"), MAX_IDENTIFIER)
    if identifier is None or not URN.match(identifier):
        return None
    name = _text(item.get("displayName"), MAX_NAME)
    if name is None or _MARKUP.search(name):
        return None
    kind = _text(item.get("type"), MAX_TYPE)
    if kind is None or not _MEDIA_TYPE.match(kind):
        return None
    score = item.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 100:
        return None
    out: dict[str, Any] = {"identifier": identifier, "displayName": name, "type": kind}
    if ("url" in item) == ("data" in item):
        return None
    if "url" in item:
        url = web_url(item["url"])
        if url is None:
            return None
        out["url"] = url
    else:
        data = item["data"]
        if not isinstance(data, dict) or len(json.dumps(data)) > MAX_INLINE:
            return None
        out["data"] = data
    description = _text(item.get("description"), MAX_DESCRIPTION, lines=True)
    if description is not None:
        out["description"] = description
    for member in ("tags", "capabilities"):
        tokens = _tokens(item.get(member))
        if tokens:
            out[member] = tokens
    version = _text(item.get("version"), MAX_VERSION)
    if version is not None:
        out["version"] = version
    updated = item.get("updatedAt")
    if isinstance(updated, str) and params.moment(updated) is not None:
        out["updatedAt"] = updated
    metadata = _metadata(item.get("metadata"))
    if metadata is not None:
        out["metadata"] = metadata
    out["score"] = int(round(score))
    out["source"] = web_url(item.get("source")) or peer
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
        # Peers are registries the operator chose, asked on a reader's behalf (who is held to
        # the registry's own request limits): no per-destination gap or ceiling, which would
        # turn a busy hour's searches into refusals (docs/fetch-policy.md, "Politeness").
        min_gap=0.0,
        hourly_limit=0,
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


def _url_key(item: dict[str, Any]) -> str | None:
    url = item.get("url")
    return normalise_fetched(url) if isinstance(url, str) else None


def merge(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ours and the peers' results by score (ours first on a tie); an identifier we hold
    ourselves, or a card URL one of ours has in any spelling, is not repeated from a peer."""
    seen = {item["identifier"] for item in ours}
    urls = {key for key in map(_url_key, ours) if key}
    merged = list(ours)
    for item in theirs:
        if item["identifier"] not in seen and _url_key(item) not in urls:
            seen.add(item["identifier"])
            merged.append(item)
    order = {id(item): n for n, item in enumerate(merged)}
    return sorted(merged, key=lambda item: (-item["score"], order[id(item)]))

"""Submitted URLs: the well-known paths where a card is looked for (the normal form of a URL is
``cards.url_form``)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def is_origin(url: str) -> bool:
    """An origin URL (no path, no query) means: discover the card on well-known paths."""
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def candidate_card_urls(url: str) -> list[str]:
    """Where to look for the card, in order."""
    if is_origin(url):
        origin = origin_of(url)
        return [origin + path for path in WELL_KNOWN_PATHS]
    return [url]

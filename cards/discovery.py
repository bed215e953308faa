"""Submitted URLs: normalising them and the well-known paths where a card is looked for."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class InvalidURL(ValueError):
    """The text is not a URL the registry can use; the message says why."""


def normalise_url(text: str) -> str:
    """Lower-case scheme and host, drop the default port and the fragment.

    The path and query are kept as given: they are the publisher's, and many servers are
    case-sensitive. An empty path stays empty, so ``https://host/`` and ``https://host`` agree.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidURL("the URL is empty")
    text = text.strip()
    if any(ch.isspace() or ord(ch) < 0x20 for ch in text):
        raise InvalidURL("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc:
        raise InvalidURL("not an absolute URL: it needs a scheme and a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidURL("URLs with a user name or password are refused")
    host = parts.hostname or ""
    if not host:
        raise InvalidURL("the URL has no host")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host.lower()
    except UnicodeError:
        raise InvalidURL("the host name is not a valid internationalised domain name") from None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = "" if parts.path == "/" and not parts.query else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


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

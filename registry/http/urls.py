"""URL checks made before any DNS: scheme, userinfo, length, host, port (``check_url``)."""

from __future__ import annotations

from collections.abc import Iterable

import httpx

from registry.http.addresses import (
    host_refusal,
    in_allowed_networks,
    loopback_allowed,
    parse_ip_literal,
)
from registry.http.errors import FetchError
from registry.http.policy import FetchPolicy

MAX_URL_LENGTH = 2048

_DEFAULT_PORTS = {"https": 443, "http": 80}


def format_ports(ports: Iterable[int]) -> str:
    listed = ", ".join(str(p) for p in sorted(ports))
    return listed or "none"


def _parse_url(url: str) -> httpx.URL:
    """Parse with the same parser the client uses, so the check sees what gets requested."""
    if len(url) > MAX_URL_LENGTH:
        raise FetchError("bad-url", f"the URL is longer than {MAX_URL_LENGTH} characters", url=url)
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F or ch == "\\" for ch in url):
        # httpx would quietly percent-encode these; browsers and resolvers disagree on them.
        raise FetchError("bad-url", "the URL contains spaces or control characters", url=url)
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise FetchError("bad-url", "this is not a valid URL", url=url) from None
    if not parsed.scheme:
        raise FetchError("bad-url", "the URL must be absolute, with a scheme and a host", url=url)
    return parsed


def _host_of(parsed: httpx.URL) -> str:
    return parsed.raw_host.decode("ascii").lower()


def effective_port(parsed: httpx.URL) -> int:
    return parsed.port if parsed.port is not None else _DEFAULT_PORTS[parsed.scheme]


def _port_exempt(host: str, policy: FetchPolicy) -> bool:
    """Exempt hosts (tests, development) may use any port; everything else needs the list."""
    ip = parse_ip_literal(host)
    if ip is not None:
        return in_allowed_networks(ip, policy.allowed_networks)
    return host.rstrip(".") == "localhost" and loopback_allowed(policy.allowed_networks)


def checked_url(url: str, policy: FetchPolicy) -> httpx.URL:
    """``check_url``, returning the parsed URL that the client will request."""
    parsed = _parse_url(url)
    scheme = parsed.scheme
    allowed_schemes = ("https", "http") if policy.allow_http else ("https",)
    if scheme not in allowed_schemes:
        needed = "https or http" if policy.allow_http else "https"
        raise FetchError("scheme-refused", f"{scheme}: URLs are not fetched; use {needed}", url=url)
    if not parsed.raw_host:
        raise FetchError("bad-url", "the URL must be absolute, with a scheme and a host", url=url)
    if parsed.userinfo:
        raise FetchError("bad-url", "URLs with a user name or password are not fetched", url=url)
    host = _host_of(parsed)
    refusal = host_refusal(host, policy.allowed_networks)
    if refusal is not None:
        raise FetchError("address-refused", refusal, url=url)
    port = effective_port(parsed)
    if not 0 < port < 65536:
        raise FetchError("bad-url", f"{port} is not a valid port number", url=url)
    if port not in policy.allowed_ports and not _port_exempt(host, policy):
        raise FetchError(
            "port-refused",
            f"port {port} is not allowed (allowed: {format_ports(policy.allowed_ports)})",
            url=url,
        )
    return parsed


def check_url(url: str, policy: FetchPolicy) -> None:
    """Raise a permanent FetchError if ``url`` may not be fetched. No DNS, no traffic."""
    checked_url(url, policy)

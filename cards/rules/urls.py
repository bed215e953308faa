"""URL checks: absolute, a supported scheme, https outside development, a public host.

Only the first two are errors: the spec asks for https in production (a warning) and says
nothing about which hosts a card may name (a private host is a warning).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from cards.rules.context import Report, RuleContext
from cards.rules.fields import KNOWN_BINDINGS
from registry.http.addresses import host_refusal

_GRPC_HOST_PORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.%]+\]|[^\s:/?#\[\]@]+):(?P<port>\d{1,5})$")
_INSECURE_SCHEMES = frozenset({"http", "ws"})


def _ascii_host(host: str) -> str | None:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _check_host(report: Report, ctx: RuleContext, host: str, pointer: str) -> None:
    refusal = host_refusal(host, ctx.allowed_networks)
    if refusal:
        # No rule of the spec forbids such a URL in a card; whether the registry fetches it is
        # the fetch policy's business, so this is a warning, not a verdict on the card.
        message = f"the host is not public: {refusal}; the registry does not fetch it"
        report.warning("url.private-address", pointer, message)


def check_url(
    report: Report, ctx: RuleContext, value: Any, pointer: str, binding: Any = None
) -> None:
    """One URL. `binding` is the interface's protocol binding, or None for plain web URLs."""
    if not isinstance(value, str):
        return  # the type rules report it
    text = value
    if not text.strip():
        report.error("url.invalid", pointer, "the URL is empty")
        return
    grpc = isinstance(binding, str) and binding.upper() == "GRPC"
    host_port = _GRPC_HOST_PORT.fullmatch(text)
    if grpc and host_port and not text.lower().startswith(("http:", "https:")):
        # Spec v1.0 AgentInterface.url: gRPC endpoints may be plain "hostname:port".
        _check_host(report, ctx, host_port.group("host").strip("[]"), pointer)
        return
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        report.error("url.invalid", pointer, f"not a valid URL: {exc}")
        return
    # urlsplit silently drops tabs and newlines, so look at the text itself.
    if any(char.isspace() or ord(char) < 0x20 for char in text) or not parts.scheme or not host:
        hint = " (an unrendered template?)" if "{" in text else ""
        report.error("url.invalid", pointer, f"{text!r} is not an absolute URL{hint}")
        return
    scheme = parts.scheme.lower()
    # Custom or unknown bindings may use any scheme (e.g. wss for a websocket transport).
    custom = binding is not None and not (
        isinstance(binding, str) and binding.upper() in KNOWN_BINDINGS
    )
    allowed = {"http", "https", "grpc", "grpcs"} if grpc else {"http", "https"}
    if not custom and scheme not in allowed:
        report.error("url.unsupported-scheme", pointer, f"scheme {scheme!r} is not http(s)")
        return
    if scheme in _INSECURE_SCHEMES and not ctx.allow_http:
        message = f"{scheme}: URL; A2A expects https in production"
        report.warning("url.insecure-http", pointer, message)
    ascii_host = _ascii_host(host)
    if ascii_host is None:
        report.error("url.invalid", pointer, f"{host!r} is not a valid host name")
        return
    _check_host(report, ctx, ascii_host, pointer)

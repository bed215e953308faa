"""Which key sources speak for a card: its own origin, and keys a curator pinned.

DESIGN section 5 and A2A issue #2096: a signer-supplied ``jku`` is a trust root only when it
is on the card's own origin (scheme, host and port, as the browser same-origin rule has it;
https, or http where the fetch policy allows http). Otherwise the keys come from
``{origin}/.well-known/jwks.json``. A key found through any other ``jku`` is "foreign": a
signature that verifies only with it is reported as ``unbound-key``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import httpx

WELL_KNOWN_JWKS_PATH = "/.well-known/jwks.json"
_DEFAULT_PORTS = {"https": 443, "http": 80}

JkuKind = Literal["bound", "foreign", "unusable"]


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    def serialise(self) -> str:
        default = _DEFAULT_PORTS.get(self.scheme)
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def well_known_jwks(self) -> str:
        return self.serialise() + WELL_KNOWN_JWKS_PATH


def origin_of(url: str) -> Origin | None:
    """The origin of an http(s) URL (host lower-cased, IDNA-encoded, port made explicit)."""
    if not isinstance(url, str) or not url:
        return None
    return _origin_of(url)


@lru_cache(maxsize=4096)
def _origin_of(url: str) -> Origin | None:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return None
    scheme = parsed.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parsed.raw_host:
        return None
    try:
        host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    except UnicodeDecodeError:
        return None
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS[scheme]
    return Origin(scheme, host, port)


def classify_jku(jku: str, card_origin: Origin | None, allow_http: bool) -> tuple[JkuKind, str]:
    """("bound" | "foreign" | "unusable", reason) for a protected-header ``jku``."""
    target = origin_of(jku)
    if target is None:
        return "unusable", f"the jku {jku[:200]!r} is not an http(s) URL; it is ignored"
    if card_origin is None or target != card_origin:
        return "foreign", f"the jku {jku[:200]} is not on the card's origin"
    if target.scheme == "http" and not allow_http:
        return "foreign", f"the jku {jku[:200]} uses http, which the fetch policy does not allow"
    return "bound", ""

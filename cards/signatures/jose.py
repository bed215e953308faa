"""JOSE pieces: base64url, the protected header, and the algorithm policy (DESIGN section 5).

Only the protected header is read: ``jku``/``kid`` in the unprotected ``header`` are not
signed, so anyone could change them, and ``x5u`` is never followed. Every function returns a
reason instead of raising, because each reason ends up in a report.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

ACCEPTED_ALGORITHMS: tuple[str, ...] = (
    "EdDSA",
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
)
_ACCEPTED = frozenset(ACCEPTED_ALGORITHMS)
_HMAC = frozenset({"HS256", "HS384", "HS512"})
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
MAX_PROTECTED_LENGTH = 8192  # characters of base64url; real headers are ~100-300


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes | None:
    """RFC 7515 base64url without padding; None when ``text`` is not that."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


def loads_strict(text: str) -> Any:
    """``json.loads`` that rejects duplicate members (RFC 7515 section 5.2) and NaN/Infinity.

    Raises ValueError with a short reason.
    """

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=constant)
    except _Duplicate as dup:
        raise ValueError(f"the member {str(dup)!r} appears more than once") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("it is nested too deeply") from None


@dataclass(frozen=True)
class Header:
    """A decoded protected header. ``alg``/``kid``/``jku`` are None unless strings."""

    members: dict[str, Any]
    alg: str | None
    kid: str | None
    jku: str | None


# Decoded headers by their base64url text: every card signed by one key carries the same
# header, so a crawl decodes each only once. Bounded: emptied when full.
_HEADERS: dict[str, tuple[Header | None, str]] = {}
HEADERS_SIZE = 1024


def parse_protected(value: Any) -> tuple[Header | None, str]:
    """Decode ``protected``: (header, "") or (None, reason). The header is shared: read it,
    never modify it."""
    if type(value) is not str:
        return _parse_protected(value)
    found = _HEADERS.get(value)
    if found is None:
        found = _parse_protected(value)
        if len(_HEADERS) >= HEADERS_SIZE:
            _HEADERS.clear()
        _HEADERS[value] = found
    return found


def _parse_protected(value: Any) -> tuple[Header | None, str]:
    if value is None:
        return None, "the protected header is missing"
    if not isinstance(value, str):
        return None, "the protected header is not a string"
    if not value:
        return None, "the protected header is empty"
    if len(value) > MAX_PROTECTED_LENGTH:
        return None, f"the protected header is longer than {MAX_PROTECTED_LENGTH} characters"
    raw = b64url_decode(value)
    if raw is None:
        return None, "the protected header is not base64url (unpadded, URL-safe alphabet)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "the protected header is not UTF-8"
    try:
        members = loads_strict(text)
    except ValueError as exc:
        return None, f"the protected header is not valid JSON: {exc}"
    if not isinstance(members, dict):
        kind = "an array" if isinstance(members, list) else "a JSON scalar"
        return None, f"the protected header is {kind}, not an object"

    def text_member(name: str) -> str | None:
        item = members.get(name)
        return item if isinstance(item, str) else None

    return Header(members, text_member("alg"), text_member("kid"), text_member("jku")), ""


def algorithm_refusal(alg: str) -> str | None:
    """Why ``alg`` is refused, or None when it is accepted."""
    if alg in _ACCEPTED:
        return None
    if alg.lower() == "none":
        return f"alg {alg!r} means an unsigned JWS and is refused"
    if alg.upper() in _HMAC:
        return (
            f"alg {alg!r} is HMAC: a shared secret cannot show who signed a public card, "
            "so HMAC algorithms are refused"
        )
    return f"alg {alg[:40]!r} is not accepted (accepted: {', '.join(ACCEPTED_ALGORITHMS)})"


def header_problem(header: Header) -> tuple[str, str] | None:
    """("invalid" | "refused", reason) for a header that cannot be used, else None."""
    members = header.members
    if "alg" not in members:
        return "invalid", "the protected header has no alg"
    if header.alg is None:
        return "invalid", "the protected header's alg is not a string"
    refusal = algorithm_refusal(header.alg)
    if refusal:
        return "refused", refusal
    if "crit" in members:
        crit = members["crit"]
        names = crit if isinstance(crit, list) else [crit]
        listed = ", ".join(repr(n)[:40] for n in names[:5]) or "an empty list"
        return "refused", f"the header marks {listed} critical (crit); none is supported"
    if members.get("b64", True) is not True:
        return "refused", "unencoded payloads (b64: false, RFC 7797) are not supported"
    if "kid" not in members:
        return "invalid", "the protected header has no kid (A2A section 8.4.2 requires one)"
    if header.kid is None or not header.kid:
        return "invalid", "the protected header's kid is not a non-empty string"
    return None


def decode_signature(value: Any) -> tuple[bytes | None, str]:
    if value is None:
        return None, "the signature member is missing"
    if not isinstance(value, str):
        return None, "the signature is not a string"
    if not value:
        return None, "the signature is empty"
    raw = b64url_decode(value)
    if raw is None:
        return None, "the signature is not base64url (unpadded, URL-safe alphabet)"
    if not raw:
        return None, "the signature is empty"
    return raw, ""

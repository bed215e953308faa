"""The payloads a detached card signature may cover, and which served fields each one covers.

* a2a-sdk form (reference ``a2a-agent-card.md`` sections 5.1 and 5.4): byte-identical to
  a2a-sdk 1.3.0 ``_canonicalize_agent_card(parse_agent_card(card))``. ``sdk_form`` computes it
  in plain Python (``sdkform.build``) and falls back to the SDK's own protobuf round trip
  (``sdk_form_reference``) for the inputs ``sdkform`` leaves to it. Tests compare the two on
  the whole corpus and on thousands of generated cards.
* raw form: the JSON as served minus ``signatures``, RFC 8785.

Both are memoised per content digest (SHA-256 of the card's compact JSON text) in a bounded
LRU, so re-verifying an unchanged card (every re-crawl of a signed card) does not rebuild them.

RFC 8785 is written by ``jcs``: ``orjson`` when the value holds nothing it would
format differently from RFC 8785 (non-integral floats, keys outside the BMP), else the
``rfc8785`` package. Integral floats up to 2^53 are written as integers first, which is
what ECMAScript ``Number::toString`` prints for them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
import rfc8785

from cards.signatures.jose import b64url_encode
from cards.signatures.sdkform import build as build_sdk_form
from cards.signatures.sdkform_v03 import Unsupported

MAX_DEPTH = 128  # a2a-sdk _jcs.MAX_DEPTH: containers nested deeper have no canonical form
_SAFE_INT = 2**53 - 1
_DROP = object()  # "removed by the empty-value cleaning" (None is a value: JSON null)
MEMO_SIZE = 4096  # canonical forms kept per process (a few MB at most)
# The memo key's text when orjson cannot tell NaN and Infinity from null (it writes null).
_KEY_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)

# Served top-level fields that a2a-sdk's parse_agent_card folds into v1.0 fields.
_CONNECTION_FIELDS = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces")
_LEGACY_FIELDS = frozenset((*_CONNECTION_FIELDS, "security", "supportsAuthenticatedExtendedCard"))


class CanonicalError(ValueError):
    """The value has no canonical form; ``str()`` says why."""


@dataclass(frozen=True)
class Canonical:
    """One canonical payload: its bytes, base64url form and the top-level keys it holds."""

    form: str  # "a2a-sdk" or "raw"
    payload: bytes
    encoded: str  # base64url(payload), as it appears in the JWS signing input
    keys: frozenset[str]


class _Flags:
    __slots__ = ("needs_full",)

    def __init__(self) -> None:
        self.needs_full = False


def _prepare(value: Any, depth: int, clean: bool, flags: _Flags) -> Any:
    """Copy ``value`` for serialisation; with ``clean`` drop "", [], {} and null as a2a-sdk's
    ``_clean_empty`` does. Raises CanonicalError for values RFC 8785 cannot write.

    Strings and booleans, most of a card, are handled inline: this walk is on the hot path.
    """
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        if depth > MAX_DEPTH:
            raise CanonicalError(f"nesting exceeds the maximum depth of {MAX_DEPTH}")
        if kind is dict:
            out: dict[str, Any] = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise CanonicalError("object keys must be strings")
                if not key.isascii() and any(ord(ch) > 0xFFFF for ch in key):
                    flags.needs_full = True  # UTF-16 order differs from code point order
                item_kind = type(item)
                if item_kind is str:
                    if item or not clean:
                        out[key] = item
                elif item_kind is bool:
                    out[key] = item
                else:
                    prepared = _prepare(item, depth + 1, clean, flags)
                    if prepared is not _DROP:
                        out[key] = prepared
            return _DROP if clean and not out else out
        kept = []
        for item in value:
            item_kind = type(item)
            if item_kind is str:
                if item or not clean:
                    kept.append(item)
            else:
                prepared = _prepare(item, depth + 1, clean, flags)
                if prepared is not _DROP:
                    kept.append(prepared)
        return _DROP if clean and not kept else kept
    return _scalar(value, depth, clean, flags)


def _scalar(value: Any, depth: int, clean: bool, flags: _Flags) -> Any:
    if value is None:
        return _DROP if clean else None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if not -_SAFE_INT <= value <= _SAFE_INT:
            raise CanonicalError(
                f"the integer {value} is beyond ±(2^53-1) and has no RFC 8785 form"
            )
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise CanonicalError(f"{value} is not a JSON number")
        if value.is_integer() and abs(value) <= _SAFE_INT:
            return int(value)  # "1.0" -> "1", exactly as Number::toString writes it
        flags.needs_full = True
        return float(value)
    if isinstance(value, str):
        return _DROP if clean and not value else str(value)
    if isinstance(value, dict | list | tuple):  # subclasses: copied as the plain type
        plain = dict(value) if isinstance(value, dict) else list(value)
        return _prepare(plain, depth, clean, flags)
    raise CanonicalError(f"{type(value).__name__} has no JSON representation")


def _serialise(prepared: Any, flags: _Flags) -> bytes:
    try:
        if flags.needs_full:
            return rfc8785.dumps(prepared)
        # orjson writes what json.dumps(ensure_ascii=False, sort_keys=True) writes (keys in
        # code point order, the same escapes), as UTF-8, several times faster.
        return orjson.dumps(prepared, option=orjson.OPT_SORT_KEYS)
    except UnicodeEncodeError:
        raise CanonicalError("the card contains text that is not valid Unicode") from None
    except orjson.JSONEncodeError as exc:
        if "surrogates" in str(exc):
            raise CanonicalError("the card contains text that is not valid Unicode") from None
        raise CanonicalError(f"no RFC 8785 form: {exc}") from None
    except (rfc8785.CanonicalizationError, ValueError, TypeError, RecursionError) as exc:
        raise CanonicalError(f"no RFC 8785 form: {exc}") from None


def jcs(value: Any, *, clean: bool = False) -> tuple[bytes, Any]:
    """RFC 8785 bytes of ``value`` (cleaned first with ``clean``) and the value written."""
    flags = _Flags()
    prepared = _prepare(value, 1, clean, flags)
    if prepared is _DROP:
        prepared = None  # a2a-sdk: an entirely empty card canonicalises to "null"
    return _serialise(prepared, flags), prepared


def _canonical(form: str, payload: bytes, written: Any) -> Canonical:
    keys = frozenset(written) if isinstance(written, dict) else frozenset()
    return Canonical(form=form, payload=payload, encoded=b64url_encode(payload), keys=keys)


def _sdk_input(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` that ``parse_agent_card`` may mutate, without ``signatures``.

    parse_agent_card pops top-level members, writes into ``capabilities``, pops ``security``
    from each skill and rewrites each security scheme in place: exactly those containers are
    copied (a deep copy costs as much as the rest of the canonicalisation).
    """
    card = {k: v for k, v in data.items() if k != "signatures"}
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict):
        card["capabilities"] = dict(capabilities)
    skills = card.get("skills")
    if isinstance(skills, list):
        card["skills"] = [dict(s) if isinstance(s, dict) else s for s in skills]
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        card["securitySchemes"] = {
            name: dict(s) if isinstance(s, dict) else s for name, s in schemes.items()
        }
    return card


def sdk_form_reference(data: dict[str, Any]) -> Canonical:
    """The a2a-sdk form built by the SDK itself: ``parse_agent_card``, protobuf ``ParseDict``
    and ``MessageToDict`` (~200 us a card). The reference for ``sdk_form``, and its fallback.
    Raises CanonicalError."""
    # lazy: the SDK's card parser costs 100 ms at start-up, and most cards never need it
    from a2a.client.card_resolver import parse_agent_card
    from google.protobuf.json_format import MessageToDict

    # MessageToDict's output loses "signatures" anyway; dropping it first keeps a malformed
    # signatures member from making the whole card unreadable to ParseDict.
    card = _sdk_input(data)
    try:
        message = parse_agent_card(card)
        as_dict = MessageToDict(message)
    except RecursionError:
        raise CanonicalError("a2a-sdk cannot read this card: it is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - ParseError, TypeError, ValueError, ...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CanonicalError(f"a2a-sdk cannot read this card: {reason[:300]}") from None
    as_dict.pop("signatures", None)
    payload, written = jcs(as_dict, clean=True)
    return _canonical("a2a-sdk", payload, written)


def sdk_form_fast(data: dict[str, Any]) -> Canonical | None:
    """The a2a-sdk form built in plain Python; None for the inputs left to the SDK."""
    try:
        built = build_sdk_form(data)
        flags = _Flags()
        flags.needs_full = built.needs_full
        payload = _serialise(built.value, flags)
    except (Unsupported, CanonicalError, RecursionError):
        return None
    return _canonical("a2a-sdk", payload, built.value)


def _sdk_form(data: dict[str, Any]) -> Canonical:
    return sdk_form_fast(data) or sdk_form_reference(data)


def _raw_form(data: dict[str, Any]) -> Canonical:
    payload, written = jcs({k: v for k, v in data.items() if k != "signatures"})
    return _canonical("raw", payload, written)


# --- the memo ---------------------------------------------------------------------------------

_MEMO: OrderedDict[tuple[bytes, str], Canonical | str] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def content_digest(data: Any) -> bytes | None:
    """SHA-256 of the compact JSON text of ``data``: the memo key. None when ``data`` has no
    JSON text orjson writes exactly (keys that are not strings, integers beyond 64 bits, lone
    surrogates, other types): such a value is built every time, never memoised.
    """
    try:
        text = b"o" + orjson.dumps(data)
    except orjson.JSONEncodeError:
        return None
    if b"null" in text:  # maybe a NaN or an Infinity, which orjson writes as null too
        try:
            text = b"j" + _KEY_ENCODER.encode(data).encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            return None
    return hashlib.sha256(text).digest()


def _memoised(form: str, data: dict[str, Any], digest: bytes | None, build: Any) -> Canonical:
    if digest is None:
        return build(data)
    key = (digest, form)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
        if found is not None:
            _MEMO.move_to_end(key)
    if found is None:
        try:
            found = build(data)
        except CanonicalError as exc:
            found = str(exc)
        with _MEMO_LOCK:
            _MEMO[key] = found
            if len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
    if isinstance(found, str):
        raise CanonicalError(found)
    return found


def clear_memo() -> None:
    with _MEMO_LOCK:
        _MEMO.clear()


def sdk_form(data: dict[str, Any], digest: bytes | None = None) -> Canonical:
    """The a2a-sdk 1.3.0 canonical payload of a served card. Raises CanonicalError.

    ``digest``: ``content_digest(data)``, when the caller has it already.
    """
    return _memoised("a2a-sdk", data, digest or content_digest(data), _sdk_form)


def raw_form(data: dict[str, Any], digest: bytes | None = None) -> Canonical:
    """The served JSON minus ``signatures``, RFC 8785. Raises CanonicalError."""
    return _memoised("raw", data, digest or content_digest(data), _raw_form)


# --- coverage -------------------------------------------------------------------------------


def _mapped_legacy_field(name: str, data: dict[str, Any], keys: frozenset[str]) -> bool:
    """Whether a v0.x field was folded by parse_agent_card into a field the payload holds."""
    if name in _CONNECTION_FIELDS:
        return (
            "supportedInterfaces" not in data
            and bool(data.get("url"))
            and "supportedInterfaces" in keys
        )
    if name == "security":
        return (
            "securityRequirements" not in data
            and data.get("security") is not None
            and "securityRequirements" in keys
        )
    if name == "supportsAuthenticatedExtendedCard":
        capabilities = data.get("capabilities")
        declared = isinstance(capabilities, dict) and "extendedAgentCard" in capabilities
        return bool(data.get(name)) and not declared and "capabilities" in keys
    return False


def coverage(data: Any, form: str | None, keys: frozenset[str]) -> tuple[list[str], list[str]]:
    """(covered, uncovered) top-level fields of the served card for a verified payload.

    A field is covered when its value, or the v1.0 field a2a-sdk maps it to, is in the signed
    bytes. Under the a2a-sdk form unknown fields (``schemas``, ``x-*``) and fields whose value
    is emptied away (``iconUrl: ""``, scope-less ``securityRequirements``) are uncovered.
    ``signatures`` is in neither list. With no verified payload every field is uncovered.
    """
    if not isinstance(data, dict):
        return [], []
    fields = [name for name in data if name != "signatures"]
    if form in ("raw", "envelope"):
        return sorted(fields), []
    if form != "a2a-sdk":
        return [], sorted(fields)
    if _LEGACY_FIELDS.isdisjoint(data):
        covered = [n for n in fields if n in keys]
    else:
        covered = [n for n in fields if n in keys or _mapped_legacy_field(n, data, keys)]
    covered_set = set(covered)
    uncovered = [n for n in fields if n not in covered_set]
    return sorted(covered), sorted(uncovered)

"""Card bytes -> JSON object -> card in the v1.0 shape.

Everything here is pure and total: any input (hostile bytes included) gives a ParsedDocument
with findings instead of an exception, because crawls must record what went wrong.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from cards.findings import Finding, json_pointer

Shape = Literal["v0.2", "v0.3", "v1.0", "unknown"]

_BOM = b"\xef\xbb\xbf"
_ENVELOPE_KEYS = frozenset({"payload", "protected", "signature"})
# A JWS flattened JSON serialisation may also carry an unprotected "header".
_ENVELOPE_OPTIONAL_KEYS = frozenset({"header"})
# Keys that make an object a card even if it also has payload/protected/signature.
_CARD_KEYS = frozenset({"name", "skills", "url", "supportedInterfaces", "capabilities"})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
# Strings (with escapes) or brackets; strings are matched whole so brackets inside them
# never count towards the nesting depth.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class ParsedDocument:
    raw: bytes  # the bytes as served
    data: dict[str, Any] | None = None  # the JSON object as served (or inside the envelope)
    card: dict[str, Any] | None = None  # data normalised to the v1.0 shape
    shape: Shape = "unknown"  # the layout of data
    envelope: dict[str, Any] | None = None  # the JWS envelope object, when the document was one
    findings: list[Finding] = field(default_factory=list)  # parse findings (json.*, envelope.*)


def _error(code: str, pointer: str, message: str) -> Finding:
    return Finding(code=code, severity="error", pointer=pointer, message=message)


# --- bytes -> JSON value ---------------------------------------------------------------


@dataclass
class _Decoded:
    value: Any = None
    ok: bool = False
    findings: list[Finding] = field(default_factory=list)


class _NonFinite:
    """Placeholder for NaN/Infinity (or an overflowing number) until we know its pointer."""

    def __init__(self, text: str) -> None:
        self.text = text


def _parse_float(text: str) -> float | _NonFinite:
    number = float(text)
    # 1e400 parses to inf: as unrepresentable as a literal Infinity.
    return number if math.isfinite(number) else _NonFinite(text)


def _nesting_too_deep(text: str, max_depth: int) -> int | None:
    """Offset of the first bracket nested deeper than max_depth, without recursing."""
    depth = 0
    for match in _DEPTH_TOKENS.finditer(text):
        first = match.group()[0]
        if first in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        elif first in "]}":
            depth -= 1
    return None


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _decode_text(raw: bytes, result: _Decoded) -> str | None:
    if raw.startswith(_BOM):
        # RFC 8259 section 8.1: parsers MAY ignore a BOM; senders MUST NOT add one.
        result.findings.append(
            Finding("json.bom", "warning", "", "the document starts with a UTF-8 byte order mark")
        )
        raw = raw[len(_BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"invalid UTF-8 at byte offset {exc.start}: {exc.reason}"
        result.findings.append(_error("json.invalid-utf8", "", message))
        return None


def _decode_json(raw: bytes, max_depth: int) -> _Decoded:
    result = _Decoded()
    text = _decode_text(raw, result)
    if text is None:
        return result
    if not text.strip(" \t\r\n"):
        result.findings.append(_error("json.empty", "", "the document is empty"))
        return result
    deep_at = _nesting_too_deep(text, max_depth)
    if deep_at is not None:
        line, column = _line_column(text, deep_at)
        result.findings.append(
            _error(
                "json.too-deep",
                "",
                f"nesting deeper than {max_depth} levels at line {line} column {column}",
            )
        )
        return result
    duplicates: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        repeated: list[str] = []
        for key, value in pairs:
            if key in obj and key not in repeated:
                repeated.append(key)
            obj[key] = value  # last one wins, as in most parsers
        if repeated:
            # Keep a reference so the id cannot be reused by another object.
            duplicates[id(obj)] = (obj, repeated)
        return obj

    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_float=_parse_float,
            parse_constant=_NonFinite,
        )
    except json.JSONDecodeError as exc:
        result.findings.append(
            _error("json.invalid", "", f"{exc.msg} at line {exc.lineno} column {exc.colno}")
        )
        return result
    except (ValueError, RecursionError) as exc:
        # e.g. an integer longer than Python's int/str conversion limit.
        result.findings.append(_error("json.invalid", "", f"unreadable JSON: {exc}"))
        return result
    result.value = _clean_tree(value, duplicates, result.findings)
    result.ok = True
    return result


def _surrogate_error(pointer: str, where: str) -> Finding:
    # "\ud800" escapes decode to unpaired surrogates, which no UTF-8 store can hold;
    # they are replaced by U+FFFD so the rest of the card stays usable.
    return _error("json.lone-surrogate", pointer, f"{where} contains an unpaired surrogate escape")


# A member's location as a chain (parent, key); the pointer string is only built for findings,
# because a 1 MiB document can hold hundreds of thousands of containers.
_Path = tuple[Any, str | int] | None


def _pointer_of(path: _Path) -> str:
    parts: list[str | int] = []
    while path is not None:
        path, key = path
        parts.append(key)
    return json_pointer(*reversed(parts))


def _clean_member(container: Any, key: Any, path: _Path, findings: list[Finding]) -> Any:
    """Check one member (or element); return the key it now has."""
    if isinstance(key, str) and _SURROGATE.search(key):
        clean_key = _SURROGATE.sub("\ufffd", key)
        container[clean_key] = container.pop(key)
        key = clean_key
        findings.append(_surrogate_error(_pointer_of((path, key)), "the key"))
    value = container[key]
    if isinstance(value, _NonFinite):
        message = f"{value.text} is not a JSON number; read as null"
        findings.append(_error("json.non-finite", _pointer_of((path, key)), message))
        container[key] = None
    elif isinstance(value, str) and _SURROGATE.search(value):
        findings.append(_surrogate_error(_pointer_of((path, key)), "the string"))
        container[key] = _SURROGATE.sub("\ufffd", value)
    return key


def _clean_tree(
    root: Any,
    duplicates: dict[int, tuple[dict[str, Any], list[str]]],
    findings: list[Finding],
) -> Any:
    """Report duplicate keys, non-finite numbers and lone surrogates with pointers, and
    replace the values no store can hold.

    Iterative on purpose: the depth was bounded by max_depth, but callers may raise it.
    """
    if isinstance(root, _NonFinite):
        findings.append(_error("json.non-finite", "", f"{root.text} is not a JSON number"))
        return None
    stack: list[tuple[Any, _Path]] = [(root, None)] if isinstance(root, (dict, list)) else []
    seen: set[int] = set()
    while stack:
        container, path = stack.pop()
        if isinstance(container, dict) and id(container) in duplicates:
            seen.add(id(container))
            for key in duplicates[id(container)][1]:
                message = f"key {key!r} appears more than once"
                findings.append(_error("json.duplicate-key", _pointer_of(path), message))
        keys = list(container) if isinstance(container, dict) else range(len(container))
        for key in keys:
            key = _clean_member(container, key, path, findings)
            value = container[key]
            if isinstance(value, (dict, list)) and value:
                stack.append((value, (path, key)))
    for obj_id, (_, keys) in duplicates.items():
        if obj_id not in seen:
            # The object was itself overwritten by a later duplicate, so it has no pointer.
            for key in keys:
                message = f"key {key!r} repeated in a discarded object"
                findings.append(_error("json.duplicate-key", "", message))
    return root


# --- JWS envelope (seed 004) -------------------------------------------------------------


def _is_envelope(value: dict[str, Any]) -> bool:
    keys = set(value)
    return _ENVELOPE_KEYS <= keys and not (keys & _CARD_KEYS)


def _b64url_decode(text: str) -> bytes | None:
    # RFC 7515 base64url: the URL-safe alphabet without "=" padding.
    if not _BASE64URL.fullmatch(text) or len(text) % 4 == 1:
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _open_envelope(envelope: dict[str, Any], max_depth: int, doc: ParsedDocument) -> None:
    doc.envelope = envelope
    extra = sorted(set(envelope) - _ENVELOPE_KEYS - _ENVELOPE_OPTIONAL_KEYS)
    if extra:
        doc.findings.append(
            Finding(
                "envelope.extra-members",
                "warning",
                "",
                f"JWS envelope has members other than payload/protected/signature: {extra}",
            )
        )
    doc.findings.append(
        Finding(
            "envelope.unverified",
            "info",
            "",
            "the card came in a JWS envelope; its signature is checked separately",
        )
    )
    payload = envelope.get("payload")
    payload_bytes = _b64url_decode(payload) if isinstance(payload, str) else None
    if payload_bytes is None:
        doc.findings.append(
            _error("envelope.bad-payload", "/payload", "payload is not a base64url string")
        )
        return
    inner = _decode_json(payload_bytes, max_depth)
    for finding in inner.findings:
        if finding.severity == "error" and not inner.ok:
            # The payload could not be read at all: that is a broken envelope.
            doc.findings.append(
                _error("envelope.bad-payload", "/payload", f"payload: {finding.message}")
            )
        else:
            doc.findings.append(finding)
    if not inner.ok:
        return
    if not isinstance(inner.value, dict):
        doc.findings.append(
            _error("envelope.bad-payload", "/payload", "payload is not a JSON object")
        )
        return
    doc.data = inner.value


# --- shape and normalisation ------------------------------------------------------------


def detect_shape(data: dict[str, Any]) -> Shape:
    """Classify by structure, as corpus MANIFEST.tsv does; the declared version is a hint only."""
    if not isinstance(data, dict):
        return "unknown"
    if "supportedInterfaces" in data:
        return "v1.0"
    declared = data.get("protocolVersion")
    if isinstance(declared, str) and declared.strip().startswith("0.3"):
        return "v0.3"
    if "url" in data:
        if "preferredTransport" in data or "additionalInterfaces" in data:
            return "v0.3"
        return "v0.2"
    return "unknown"


_SCHEME_WRAPPERS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
# Top-level v0.x fields that have no place in a v1.0 card once folded into supportedInterfaces.
_CONNECTION_FIELDS = ("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
_EXTENDED_CARD_FIELDS = ("supportsAuthenticatedExtendedCard", "supportsExtendedAgentCard")
DEFAULT_TRANSPORT = "JSONRPC"
DEFAULT_PROTOCOL_VERSION = "0.3.0"


def _interfaces_from_legacy(card: dict[str, Any]) -> list[Any]:
    transport = card.get("preferredTransport")
    if not isinstance(transport, str) or not transport:
        transport = DEFAULT_TRANSPORT
    version = card.get("protocolVersion")
    if not isinstance(version, str) or not version:
        # a2a-sdk's card_resolver default; the v0.3 schema default too.
        version = DEFAULT_PROTOCOL_VERSION
    main = {"url": card.get("url"), "protocolBinding": transport, "protocolVersion": version}
    interfaces: list[Any] = [main]
    additional = card.get("additionalInterfaces")
    for entry in additional if isinstance(additional, list) else []:
        if not isinstance(entry, dict):
            interfaces.append(entry)  # left for the rules to report
            continue
        converted = {k: v for k, v in entry.items() if k != "transport"}
        converted["protocolBinding"] = entry.get("transport")
        converted.setdefault("protocolVersion", version)
        # v0.3 says additionalInterfaces SHOULD repeat the main interface: don't list it twice.
        if converted.get("url") == main["url"] and converted["protocolBinding"] == transport:
            continue
        interfaces.append(converted)
    return interfaces


def _normalise_interfaces(card: dict[str, Any]) -> None:
    if "supportedInterfaces" not in card and "url" in card:
        card["supportedInterfaces"] = _interfaces_from_legacy(card)
    interfaces = card.get("supportedInterfaces")
    for entry in interfaces if isinstance(interfaces, list) else []:
        # Early v1.0 drafts (corpus 015) still said "transport".
        if isinstance(entry, dict) and "protocolBinding" not in entry and "transport" in entry:
            entry["protocolBinding"] = entry.pop("transport")
    # Folded into supportedInterfaces (or meaningless without it), as a2a-sdk does.
    for name in _CONNECTION_FIELDS:
        card.pop(name, None)


def _normalise_extended_card(card: dict[str, Any]) -> None:
    for name in _EXTENDED_CARD_FIELDS:
        value = card.get(name)
        if not isinstance(value, bool):
            continue  # absent, or a wrong type left in place for the rules to report
        capabilities = card.setdefault("capabilities", {})
        if isinstance(capabilities, dict):
            capabilities.setdefault("extendedAgentCard", value)
            del card[name]
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict):
        capabilities.pop("stateTransitionHistory", None)  # removed in v1.0 (PR #1396)


def _requirement_from_legacy(entry: Any) -> Any:
    """{name: [scopes]} -> {schemes: {name: {list: [scopes]}}}; other shapes kept."""
    if not isinstance(entry, dict):
        return entry
    if set(entry) == {"schemes"} and isinstance(entry["schemes"], dict):
        # Already v1.0; tolerate bare scope lists inside (corpus 015).
        return {"schemes": _scope_lists(entry["schemes"])}
    return {"schemes": _scope_lists(entry)}


def _scope_lists(schemes: dict[str, Any]) -> dict[str, Any]:
    return {name: {"list": v} if isinstance(v, list) else v for name, v in schemes.items()}


def _normalise_requirements(holder: dict[str, Any]) -> None:
    if "security" in holder:
        legacy = holder.pop("security")
        if "securityRequirements" not in holder:
            holder["securityRequirements"] = legacy
    if isinstance(holder.get("securityRequirements"), list):
        holder["securityRequirements"] = [
            _requirement_from_legacy(entry) for entry in holder["securityRequirements"]
        ]


def _normalise_scheme(scheme: Any) -> Any:
    kind = scheme.get("type") if isinstance(scheme, dict) else None
    if not isinstance(kind, str) or kind not in _SCHEME_WRAPPERS:
        return scheme
    body = {k: v for k, v in scheme.items() if k != "type"}
    if kind == "apiKey" and "in" in body and "location" not in body:
        body["location"] = body.pop("in")
    return {_SCHEME_WRAPPERS[kind]: body}


def _normalise_security(card: dict[str, Any]) -> None:
    _normalise_requirements(card)
    skills = card.get("skills")
    for skill in skills if isinstance(skills, list) else []:
        if isinstance(skill, dict):
            _normalise_requirements(skill)
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        card["securitySchemes"] = {name: _normalise_scheme(s) for name, s in schemes.items()}


def _copy_json(data: dict[str, Any]) -> dict[str, Any]:
    # A JSON round trip copies a parsed document several times faster than deepcopy.
    try:
        copied = json.loads(json.dumps(data))
    except (TypeError, ValueError):  # not plain JSON (a caller's own dict): copy it as it is
        copied = copy.deepcopy(data)
    return copied if isinstance(copied, dict) else copy.deepcopy(data)


def normalise_card(data: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """A new dict in the v1.0 shape (reference section 1.4); `data` is left untouched.

    The folding is the same for every shape, as in a2a-sdk's card_resolver, because hybrids
    are common (v1.0 cards with `security`, top-level `url`, OpenAPI-style schemes); `shape`
    is part of the signature so callers state what they detected. Unknown members are kept:
    later modules need `schemas`, `x-*` fields and skill extras. Values of the wrong type are
    left as they are for the rules to report.
    """
    if not isinstance(data, dict):
        return {}
    card = _copy_json(data)
    _normalise_interfaces(card)
    _normalise_extended_card(card)
    _normalise_security(card)
    return card


# --- entry point --------------------------------------------------------------------------


_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def _parse(raw: bytes, max_depth: int) -> ParsedDocument:
    doc = ParsedDocument(raw=raw)
    decoded = _decode_json(raw, max_depth)
    doc.findings.extend(decoded.findings)
    if not decoded.ok:
        return doc
    if not isinstance(decoded.value, dict):
        kind = _JSON_KINDS.get(type(decoded.value), "null")
        message = f"the top level is {kind}, not an object"
        doc.findings.append(_error("json.not-object", "", message))
        return doc
    if _is_envelope(decoded.value):
        _open_envelope(decoded.value, max_depth, doc)
    else:
        doc.data = decoded.value
    if doc.data is not None:
        doc.shape = detect_shape(doc.data)
        doc.card = normalise_card(doc.data, doc.shape)
    return doc


def parse_card_bytes(raw: bytes, *, max_depth: int = 64) -> ParsedDocument:
    """Parse served bytes into a ParsedDocument. Never raises."""
    try:
        return _parse(bytes(raw), max_depth)
    except Exception as exc:  # noqa: BLE001 - a crawl must record, not crash
        doc = ParsedDocument(raw=raw if isinstance(raw, bytes) else b"")
        doc.findings.append(_error("parse.internal-error", "", f"parser failed: {exc!r}"))
        return doc

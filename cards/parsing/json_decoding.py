"""Bytes -> JSON value, with findings instead of exceptions.

Beyond json.loads this reports what a permissive parser would hide: a byte order mark,
invalid UTF-8, nesting too deep to handle, duplicate keys, NaN/Infinity and unpaired
surrogate escapes, each with a pointer to where it is.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from cards.parsing.document import error
from registry.findings import Finding, json_pointer

_BOM = b"\xef\xbb\xbf"
# Strings (with escapes) or brackets; strings are matched whole so brackets inside them
# never count towards the nesting depth.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Decoded:
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


def _decode_text(raw: bytes, result: Decoded) -> str | None:
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
        result.findings.append(error("json.invalid-utf8", "", message))
        return None


def decode_json(raw: bytes, max_depth: int) -> Decoded:
    result = Decoded()
    text = _decode_text(raw, result)
    if text is None:
        return result
    if not text.strip(" \t\r\n"):
        result.findings.append(error("json.empty", "", "the document is empty"))
        return result
    deep_at = _nesting_too_deep(text, max_depth)
    if deep_at is not None:
        line, column = _line_column(text, deep_at)
        result.findings.append(
            error(
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
            error("json.invalid", "", f"{exc.msg} at line {exc.lineno} column {exc.colno}")
        )
        return result
    except (ValueError, RecursionError) as exc:
        # e.g. an integer longer than Python's int/str conversion limit.
        result.findings.append(error("json.invalid", "", f"unreadable JSON: {exc}"))
        return result
    result.value = _clean_tree(value, duplicates, result.findings)
    result.ok = True
    return result


def _surrogate_error(pointer: str, where: str) -> Finding:
    # "\ud800" escapes decode to unpaired surrogates, which no UTF-8 store can hold;
    # they are replaced by U+FFFD so the rest of the card stays usable.
    return error("json.lone-surrogate", pointer, f"{where} contains an unpaired surrogate escape")


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
        findings.append(error("json.non-finite", _pointer_of((path, key)), message))
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
        findings.append(error("json.non-finite", "", f"{root.text} is not a JSON number"))
        return None
    stack: list[tuple[Any, _Path]] = [(root, None)] if isinstance(root, (dict, list)) else []
    seen: set[int] = set()
    while stack:
        container, path = stack.pop()
        if isinstance(container, dict) and id(container) in duplicates:
            seen.add(id(container))
            for key in duplicates[id(container)][1]:
                message = f"key {key!r} appears more than once"
                findings.append(error("json.duplicate-key", _pointer_of(path), message))
        keys: list[Any] = (
            list(container) if isinstance(container, dict) else list(range(len(container)))
        )
        for raw_key in keys:
            key = _clean_member(container, raw_key, path, findings)
            value = container[key]
            if isinstance(value, (dict, list)) and value:
                stack.append((value, (path, key)))
    for obj_id, (_, keys) in duplicates.items():
        if obj_id not in seen:
            # The object was itself overwritten by a later duplicate, so it has no pointer.
            for key in keys:
                message = f"key {key!r} repeated in a discarded object"
                findings.append(error("json.duplicate-key", "", message))
    return root

"""Client input that is not text: a query string or a JSON body whose bytes are not UTF-8.

Django reads undecodable bytes as U+FFFD and Python's codecs explain them in their own words
("'utf-8' codec can't decode byte 0xff in position 3: invalid start byte"); either way the client
learns nothing it can act on. Every door (REST, ARD, the catalogue, MCP, A2A) asks here instead,
and answers in its own error shape naming the parameter, or the place in the body, and the byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from registry.findings import json_pointer

NOT_UTF8 = "is not UTF-8 once percent-decoded"
HAS_NUL = "contains a NUL character"


@dataclass(frozen=True)
class QueryFault:
    """Why one query parameter cannot be read. ``name`` is None when the parameter's name is
    itself unreadable; ``message`` completes a sentence that starts with the name."""

    name: str | None
    message: str

    def sentence(self) -> str:
        return f"{self.name} {self.message}" if self.name is not None else self.unnamed()

    def unnamed(self) -> str:
        return f"a parameter name {self.message}"


def _query_bytes(raw: str) -> bytes:
    try:
        return raw.encode("latin-1")  # WSGI hands the raw bytes over as latin-1 text
    except UnicodeEncodeError:
        return raw.encode("utf-8", "surrogatepass")


def query_fault(raw: str) -> QueryFault | None:
    """The first parameter of a raw query string whose name or value, percent-decoded, is not
    UTF-8 (a surrogate encoded as UTF-8 is not) or holds a NUL; None when all can be read."""
    if not raw:
        return None
    for pair in _query_bytes(raw).split(b"&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.partition(b"=")
        name, fault = _form_decoded(raw_name)
        if fault is not None:
            return QueryFault(None, fault)
        _value, fault = _form_decoded(raw_value)
        if fault is not None:
            return QueryFault(name, fault)
    return None


def _form_decoded(raw: bytes) -> tuple[str, str | None]:
    """One name or value of a query string, percent- and plus-decoded: (text, None), or ("",
    the fault) when it is not UTF-8 or holds a NUL."""
    try:
        text = unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return "", NOT_UTF8
    return (text, HAS_NUL) if "\x00" in text else (text, None)


_SURROGATE = re.compile("[\ud800-\udfff]")


def unpaired_surrogate(data: Any) -> str | None:
    """The JSON pointer of the first string holding a lone surrogate (of the object, when it is a
    member's name), None when there is none. Iterative, so any depth the parser took is fine.

    JSON allows ``"\\ud800"``, which Python reads into a string no store or encoder takes, and a
    body that is not UTF-8 is read with its bad bytes as lone surrogates (:func:`body_fault`).
    Most bodies hold none: one pass of the C encoder over the parsed document says so before the
    walk that names the place (a walk costs about 1 µs a value: 0.25 s for 250,000 items)."""
    try:
        if not _SURROGATE.search(json.dumps(data, ensure_ascii=False, check_circular=False)):
            return None
    except (TypeError, ValueError, RecursionError):
        pass  # not plain JSON data (or too deep for the encoder): the walk decides
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return json_pointer(*path)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return json_pointer(*path)  # the object: its member's name is not text
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in enumerate(value))
    return None


@dataclass(frozen=True)
class BodyFault:
    """A body that is not UTF-8: the offset of its first undecodable byte, and the JSON pointer
    of the string holding it when the rest of the body reads as JSON."""

    offset: int
    pointer: str | None

    def sentence(self, subject: str = "the request body") -> str:
        where = f"the string at {self.pointer or '/'}" if self.pointer is not None else subject
        return f"{where} is not UTF-8 (byte {self.offset} cannot be decoded)"


def body_fault(body: bytes) -> BodyFault | None:
    """Why ``body`` is not UTF-8 text (JSON must be: RFC 8259 section 8.1), or None when it is.

    The undecodable bytes are read as lone surrogates (``surrogateescape``) to find the string
    they sit in; a body that is not JSON either way is named as a whole."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start
    else:
        return None
    try:
        data = json.loads(body.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return BodyFault(offset, None)
    return BodyFault(offset, unpaired_surrogate(data))

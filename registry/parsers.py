"""Request bodies of the API: JSON, refused when its strings are not Unicode text.

JSON allows ``"\\ud800"``, an escaped lone surrogate, which Python reads into a string that can
be neither stored (PostgreSQL) nor encoded as UTF-8: the request failed later with a 500. The
registry's parsers refuse such a body with a 400 naming the place (the same rule ARD applies).

A body that is not JSON is a 400 ``malformed-request`` whose detail says where and what in
words, not in Python's parser's: ``The body is not valid JSON: line 1 column 8: a member name
in double quotes was expected.`` (:func:`json_error_detail`).
"""

from __future__ import annotations

import io
import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from registry.undecodable import body_fault, unpaired_surrogate

__all__ = ["StrictJSONParser", "json_error_detail", "unpaired_surrogate"]

NOT_JSON = "The body is not valid JSON"
# Python's parser's messages (json.JSONDecodeError.msg), said for the sender.
_WORDS = {
    "Expecting value": "a value was expected (a string, number, object, array, true, false "
    "or null)",
    "Expecting property name enclosed in double quotes": "a member name in double quotes was "
    "expected (a comma before a closing brace, or a name without quotes?)",
    "Expecting ':' delimiter": "a ':' was expected after the member name",
    "Expecting ',' delimiter": "a ',' or a closing bracket was expected",
    "Extra data": "more follows the end of the document",
    "Unterminated string starting at": "a string starts here and is never closed",
    "Invalid control character at": "a control character (a line break or tab) inside a "
    "string must be escaped",
    "Invalid \\escape": "an unknown escape after a backslash inside a string",
    "Invalid \\uXXXX escape": "a \\u escape needs four hexadecimal digits",
}


def json_error_detail(error: ValueError) -> str:
    """What was wrong with a body that did not parse, with the line and column for a syntax
    error (1-based, as editors count)."""
    if isinstance(error, json.JSONDecodeError):
        if not error.doc.strip():
            return f"{NOT_JSON}: it is empty or only white space."
        words = _WORDS.get(error.msg, error.msg)
        return f"{NOT_JSON}: line {error.lineno} column {error.colno}: {words}."
    text = str(error)
    constant = text.rpartition(": ")[2] if "not JSON compliant" in text else ""
    if constant:  # DRF's strict mode: NaN, Infinity, -Infinity
        return f"{NOT_JSON}: {constant.strip(chr(39))} is not a JSON number."
    return f"{NOT_JSON}: {text}."


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing strings that are not Unicode text (lone surrogates) and
    documents nested deeper than Python's parser goes (a 400, not a 500)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = str((parser_context or {}).get("encoding") or "utf-8")
        if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
            # Bytes that are not UTF-8: named in our words, not the codec's (registry/undecodable).
            raw = stream.read() if stream is not None else b""
            fault = body_fault(raw)
            if fault is not None:
                raise ParseError(f"{NOT_JSON}: {fault.sentence()}.")
            stream = io.BytesIO(raw)
        try:
            data = super().parse(stream, media_type, parser_context)
        except ParseError as exc:
            cause = exc.__context__  # DRF raises it while handling the parser's ValueError
            if isinstance(cause, ValueError):
                raise ParseError(json_error_detail(cause)) from None
            raise
        except RecursionError:
            raise ParseError("The body cannot be read: it is nested too deeply.") from None
        where = unpaired_surrogate(data)
        if where is not None:
            raise ParseError(
                f"{NOT_JSON}: the string at {where or '/'} has an unpaired surrogate "
                "(\\ud800-\\udfff escape): it is not Unicode text."
            )
        return data

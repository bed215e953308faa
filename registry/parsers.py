"""Request bodies of the API: JSON, refused when its strings are not Unicode text.

JSON allows ``"\\ud800"``, an escaped lone surrogate, which Python reads into a string that can
be neither stored (PostgreSQL) nor encoded as UTF-8: the request failed later with a 500. The
registry's parsers refuse such a body with a 400 naming the place (the same rule ARD applies).
"""

from __future__ import annotations

import io
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from registry.undecodable import body_fault, unpaired_surrogate

__all__ = ["StrictJSONParser", "unpaired_surrogate"]


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
                raise ParseError(f"JSON parse error - {fault.sentence()}.")
            stream = io.BytesIO(raw)
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
        where = unpaired_surrogate(data)
        if where is not None:
            raise ParseError(
                f"JSON parse error - the string at {where or '/'} has an unpaired surrogate "
                "(\\ud800-\\udfff escape): it is not Unicode text."
            )
        return data

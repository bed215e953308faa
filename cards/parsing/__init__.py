"""Card bytes -> JSON object -> card in the v1.0 shape.

Everything here is pure and total: any input (hostile bytes included) gives a ParsedDocument
with findings instead of an exception, because crawls must record what went wrong.

Modules: ``document`` (ParsedDocument), ``json_decoding`` (bytes -> JSON value with json.*
findings), ``envelope`` (JWS envelopes, envelope.* findings), ``shape`` (detect_shape),
``normalise`` (any shape -> v1.0) and ``pipeline`` (parse_card_bytes, which runs them in order).
"""

from __future__ import annotations

from cards.parsing.document import ParsedDocument
from cards.parsing.normalise import DEFAULT_PROTOCOL_VERSION, DEFAULT_TRANSPORT, normalise_card
from cards.parsing.pipeline import parse_card_bytes
from cards.parsing.shape import Shape, detect_shape

__all__ = [
    "DEFAULT_PROTOCOL_VERSION",
    "DEFAULT_TRANSPORT",
    "ParsedDocument",
    "Shape",
    "detect_shape",
    "normalise_card",
    "parse_card_bytes",
]

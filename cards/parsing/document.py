"""What a parse produces: ParsedDocument, and the error finding every parse step reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cards.parsing.shape import Shape
from registry.findings import Finding


@dataclass
class ParsedDocument:
    raw: bytes  # the bytes as served
    data: dict[str, Any] | None = None  # the JSON object as served (or inside the envelope)
    card: dict[str, Any] | None = None  # data normalised to the v1.0 shape
    shape: Shape = "unknown"  # the layout of data
    envelope: dict[str, Any] | None = None  # the JWS envelope object, when the document was one
    findings: list[Finding] = field(default_factory=list)  # parse findings (json.*, envelope.*)


def error(code: str, pointer: str, message: str) -> Finding:
    return Finding(code=code, severity="error", pointer=pointer, message=message)

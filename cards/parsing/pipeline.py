"""The entry point: served bytes -> ParsedDocument, running every parse step in order."""

from __future__ import annotations

from cards.parsing.document import ParsedDocument, error
from cards.parsing.envelope import is_envelope, open_envelope
from cards.parsing.json_decoding import decode_json
from cards.parsing.normalise import normalise_card
from cards.parsing.shape import detect_shape

_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def _parse(raw: bytes, max_depth: int) -> ParsedDocument:
    doc = ParsedDocument(raw=raw)
    decoded = decode_json(raw, max_depth)
    doc.findings.extend(decoded.findings)
    if not decoded.ok:
        return doc
    if not isinstance(decoded.value, dict):
        kind = _JSON_KINDS.get(type(decoded.value), "null")
        message = f"the top level is {kind}, not an object"
        doc.findings.append(error("json.not-object", "", message))
        return doc
    if is_envelope(decoded.value):
        open_envelope(decoded.value, max_depth, doc)
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
        doc.findings.append(error("parse.internal-error", "", f"parser failed: {exc!r}"))
        return doc

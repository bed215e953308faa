"""JWS envelopes (seed 004): recognise one and open its payload as the card.

The signature itself is not checked here; that is done separately.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cards.parsing.document import ParsedDocument, error
from cards.parsing.json_decoding import decode_json
from registry.findings import Finding

_ENVELOPE_KEYS = frozenset({"payload", "protected", "signature"})
# A JWS flattened JSON serialisation may also carry an unprotected "header".
_ENVELOPE_OPTIONAL_KEYS = frozenset({"header"})
# Keys that make an object a card even if it also has payload/protected/signature.
_CARD_KEYS = frozenset({"name", "skills", "url", "supportedInterfaces", "capabilities"})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def is_envelope(value: dict[str, Any]) -> bool:
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


def open_envelope(envelope: dict[str, Any], max_depth: int, doc: ParsedDocument) -> None:
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
            error("envelope.bad-payload", "/payload", "payload is not a base64url string")
        )
        return
    inner = decode_json(payload_bytes, max_depth)
    for finding in inner.findings:
        if finding.severity == "error" and not inner.ok:
            # The payload could not be read at all: that is a broken envelope.
            doc.findings.append(
                error("envelope.bad-payload", "/payload", f"payload: {finding.message}")
            )
        else:
            doc.findings.append(finding)
    if not inner.ok:
        return
    if not isinstance(inner.value, dict):
        doc.findings.append(
            error("envelope.bad-payload", "/payload", "payload is not a JSON object")
        )
        return
    doc.data = inner.value

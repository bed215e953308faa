"""The signatures a document carries: the envelope's, then ``signatures[]``, bounded and
de-duplicated before any of them is checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cards.signatures.canonical import Canonical
from cards.signatures.jose import b64url_decode
from cards.signatures.report import SignatureResult

MAX_SIGNATURES = 16  # checked per document; the rest are refused without work


@dataclass
class Entry:
    index: int | None  # position in signatures[]; None for the envelope
    value: Any  # the signature object as served (None: an envelope with a bad payload)
    payload: Canonical | None = None  # the attached payload of an envelope


def document_entries(
    data: dict[str, Any] | None, envelope: dict[str, Any] | None
) -> tuple[list[Entry], str]:
    """(entries, problem): ``problem`` is set when ``signatures`` is not an array."""
    entries: list[Entry] = []
    if envelope is not None:
        payload = envelope.get("payload") if isinstance(envelope, dict) else None
        if isinstance(payload, str) and b64url_decode(payload) is not None:
            keys = frozenset(data) if data else frozenset()
            attached = Canonical("envelope", b"", payload, keys)
            entries.append(Entry(None, envelope, attached))
        else:
            entries.append(Entry(None, None))
    listed = data.get("signatures") if data is not None else None
    if listed is None:
        return entries, ""
    if not isinstance(listed, list):
        return entries, "the card's 'signatures' member is not an array"
    entries.extend(Entry(i, value) for i, value in enumerate(listed))
    return entries, ""


def _identity(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, dict):
        return None
    protected, signature = value.get("protected"), value.get("signature")
    if isinstance(protected, str) and isinstance(signature, str):
        return protected, signature
    return None


def check_all(
    check: Callable[[Entry], SignatureResult], entries: list[Entry]
) -> list[SignatureResult]:
    """``check`` each entry, except repeats and those beyond MAX_SIGNATURES (refused)."""
    results: list[SignatureResult] = []
    seen: dict[tuple[str, str], int | None] = {}
    for position, entry in enumerate(entries):
        if position >= MAX_SIGNATURES:
            reason = f"only the first {MAX_SIGNATURES} signatures of a card are checked"
            results.append(SignatureResult(entry.index, result="refused", reason=reason))
            continue
        if entry.value is None:
            results.append(SignatureResult(None, reason="the envelope payload is not base64url"))
            continue
        ident = _identity(entry.value)
        if ident is not None and ident in seen:
            first = seen[ident]
            label = "the envelope signature" if first is None else f"signature #{first}"
            reason = f"a duplicate of {label}; it is counted once"
            results.append(SignatureResult(entry.index, result="refused", reason=reason))
            continue
        if ident is not None:
            seen[ident] = entry.index
        results.append(check(entry))
    return results

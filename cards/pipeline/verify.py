"""Verify a parsed card's signatures (keys from its origin, or pinned keys given by the caller)."""

from __future__ import annotations

from cards.parsing import ParsedDocument
from cards.signatures import JwksSource, SignatureReport, verify_document
from cards.signatures.verify import PinnedJwks


def verify(
    parsed: ParsedDocument, *, card_url: str, pinned_jwks: PinnedJwks = None
) -> SignatureReport | None:
    """The signature report of a parsed document; None when there is no JSON to verify."""
    if parsed.data is None:
        return None
    return verify_document(
        data=parsed.data,
        envelope=parsed.envelope,
        card_url=card_url,
        pinned_jwks=pinned_jwks,
        jwks_source=JwksSource.from_settings(),
        findings=parsed.findings,
    )

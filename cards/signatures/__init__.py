"""Agent card signatures (DESIGN section 5): who signed a card, with keys bound to its origin.

``verify_document`` checks the detached JWS signatures of a card (``signatures[]``, A2A spec
section 8.4) over the a2a-sdk and raw canonical forms, and the signature of a JWS envelope
document, with keys from the card's origin or pinned by a curator. See docs/signatures.md.
"""

from __future__ import annotations

from cards.signatures.jwks import JwksLookup, JwksSource
from cards.signatures.keys import thumbprint
from cards.signatures.report import (
    RESULTS,
    STATUSES,
    SignatureReport,
    SignatureResult,
)
from cards.signatures.verify import verify_document

__all__ = [
    "RESULTS",
    "STATUSES",
    "JwksLookup",
    "JwksSource",
    "SignatureReport",
    "SignatureResult",
    "thumbprint",
    "verify_document",
]

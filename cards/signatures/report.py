"""What a signature check found: one ``SignatureResult`` per signature, one ``SignatureReport``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["unsigned", "verified", "unbound-key", "invalid", "key-unavailable"]
Result = Literal["verified", "unbound-key", "invalid", "key-unavailable", "refused"]
Form = Literal["a2a-sdk", "raw", "envelope"]
KeySource = Literal["jku", "well-known", "pinned", "foreign-jku"]

STATUSES: tuple[Status, ...] = ("unsigned", "verified", "unbound-key", "invalid", "key-unavailable")
RESULTS: tuple[Result, ...] = ("verified", "unbound-key", "invalid", "key-unavailable", "refused")


@dataclass
class SignatureResult:
    """The outcome for one signature.

    ``index`` is the position in the card's ``signatures`` array, or None for the signature
    of a JWS envelope document. ``transient`` is only meaningful for ``key-unavailable``: the
    key fetch failed in a way that may go away (timeout, connection refused, 5xx, 429).
    """

    index: int | None
    result: Result = "invalid"
    reason: str = ""
    kid: str | None = None
    alg: str | None = None
    key_source: KeySource | None = None
    key_url: str | None = None
    thumbprint: str | None = None
    form: Form | None = None
    transient: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kid": self.kid,
            "alg": self.alg,
            "key_source": self.key_source,
            "key_url": self.key_url,
            "thumbprint": self.thumbprint,
            "result": self.result,
            "reason": self.reason,
            "form": self.form,
        }


@dataclass
class SignatureReport:
    """The card-level verdict (DESIGN section 5) and the per-signature outcomes."""

    status: Status = "unsigned"
    form: Form | None = None
    covered_fields: list[str] = field(default_factory=list)
    uncovered_fields: list[str] = field(default_factory=list)
    signatures: list[SignatureResult] = field(default_factory=list)
    thumbprints: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def transient(self) -> bool:
        """True when the outcome rests on a key fetch that may succeed next time."""
        return self.status == "key-unavailable" and any(
            r.result == "key-unavailable" and r.transient for r in self.signatures
        )

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "form": self.form,
            "covered_fields": list(self.covered_fields),
            "uncovered_fields": list(self.uncovered_fields),
            "signatures": [s.as_dict() for s in self.signatures],
            "thumbprints": list(self.thumbprints),
            "reason": self.reason,
        }

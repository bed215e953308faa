"""The one report the pipeline returns about a card document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cards.parsing import ParsedDocument
from cards.signatures.report import SignatureReport
from registry.findings import Finding, counts


@dataclass
class CardReport:
    """What the registry concludes about one card document; stores nothing."""

    parsed: ParsedDocument
    findings: list[Finding] = field(default_factory=list)
    signature: SignatureReport | None = None

    @property
    def card(self) -> dict[str, Any] | None:
        return self.parsed.card

    @property
    def valid(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def validation(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "counts": counts(self.findings),
            "findings": [f.as_dict() for f in self.findings],
        }

    def as_dict(self, source: dict[str, Any]) -> dict[str, Any]:
        """The answer of ``POST /api/v1/validate``: the same report as an agent's detail."""
        return {
            "source": source,
            "shape": self.parsed.shape,
            "validation": self.validation(),
            "signature": self.signature.as_dict() if self.signature else None,
            "card": self.card,
        }

"""Findings: what parsing and validation say about a card.

A finding is a small immutable record (code, severity, pointer, message). Codes are stable
dotted names listed in docs/validation-rules.md; pointers are RFC 6901 JSON pointers into the
document as it was served, so a client can highlight the exact member.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    pointer: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {
            "code": self.code,
            "severity": self.severity,
            "pointer": self.pointer,
            "message": self.message,
        }


def _escape(part: str | int) -> str:
    # RFC 6901 section 3: "~" must be escaped before "/", otherwise "/" -> "~1" -> "~01".
    return str(part).replace("~", "~0").replace("/", "~1")


def json_pointer(*parts: str | int) -> str:
    """Build an RFC 6901 pointer; no parts gives "" (the whole document)."""
    return "".join("/" + _escape(part) for part in parts)


def extend_pointer(base: str, part: str | int, *parts: str | int) -> str:
    """Append parts to an existing pointer: extend_pointer("/skills", 0) == "/skills/0"."""
    return base + json_pointer(part, *parts)


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    """Number of findings per severity, always with all three keys."""
    result: dict[str, int] = {severity: 0 for severity in SEVERITIES}
    for finding in findings:
        result[finding.severity] = result.get(finding.severity, 0) + 1
    return result

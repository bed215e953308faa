"""What every rule works with: the caller's RuleContext, the findings Report and the Run."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from cards.parsing import Shape
from registry.findings import Finding, Severity

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Enough to show everything wrong with a real card; bounded so a hostile one cannot make
# us store millions of rows.
MAX_FINDINGS = 1000


@dataclass(frozen=True)
class RuleContext:
    allow_http: bool = False
    # Exempt from url.private-address (development and tests), like the fetcher's setting.
    allowed_networks: tuple[Network, ...] = ()


class Report:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.dropped = 0

    def add(self, code: str, severity: Severity, pointer: str, message: str) -> None:
        if len(self.findings) >= MAX_FINDINGS:
            self.dropped += 1
            return
        self.findings.append(Finding(code, severity, pointer, message))

    def error(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "error", pointer, message)

    def warning(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "warning", pointer, message)

    def info(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "info", pointer, message)


@dataclass
class Run:
    data: dict[str, Any]  # as served: every pointer points into this
    card: dict[str, Any]  # the v1.0 normal form
    shape: Shape  # the layout
    ctx: RuleContext
    report: Report
    # The version the card is judged by: its layout, unless it declares a version whose layout
    # it also has (a hybrid card declaring 0.3.0 is judged as v0.3). See rules.versions.
    judged: Shape = "unknown"

    def __post_init__(self) -> None:
        if self.judged == "unknown":
            self.judged = self.shape

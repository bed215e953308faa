"""Version checks: the card's own version (semver) and the declared A2A protocol version."""

from __future__ import annotations

import re
from typing import Any

from cards.parsing import Shape
from cards.rules.context import Report, Run

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
PROTOCOL_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?$")


def check_protocol_version(report: Report, value: Any, pointer: str) -> None:
    if isinstance(value, str) and value.strip() and not PROTOCOL_VERSION.match(value):
        report.warning(
            "card.protocol-version-format",
            pointer,
            f"{value!r} does not look like a protocol version ('1.0', '0.3.0')",
        )


def _layout_of(protocol_version: str) -> Shape:
    if not protocol_version.startswith("0."):
        return "v1.0"
    return "v0.3" if protocol_version.startswith("0.3") else "v0.2"


def judged_shape(data: dict[str, Any], shape: Shape) -> Shape:
    """The version a card is judged by: the one it declares when it has that layout too.

    A hybrid card with `supportedInterfaces` plus the v0.x `url` and a declared
    `protocolVersion` 0.x (corpus 057) is a complete card of the version it declares; the
    v1.0 members it adds are extras, not an incomplete v1.0 card. Otherwise the layout decides.
    """
    declared = data.get("protocolVersion")
    if shape != "v1.0" or "url" not in data or not isinstance(declared, str):
        return shape
    if PROTOCOL_VERSION.match(declared) and declared.startswith("0."):
        return _layout_of(declared)
    return shape


def rule_versions(run: Run) -> None:
    version = run.data.get("version")
    if isinstance(version, str) and version.strip() and not SEMVER.match(version):
        run.report.warning(
            "card.version-not-semver", "/version", f"{version!r} is not MAJOR.MINOR.PATCH (semver)"
        )
    declared = run.data.get("protocolVersion")
    check_protocol_version(run.report, declared, "/protocolVersion")
    if run.shape not in ("v0.2", "v0.3") or not isinstance(declared, str):
        return
    if not PROTOCOL_VERSION.match(declared) or _layout_of(declared) == run.shape:
        return
    if _layout_of(declared) == "v1.0":
        # The card says it follows 1.x, where supportedInterfaces is REQUIRED (a2a.proto
        # AgentCard.supported_interfaces); a v0.x layout cannot be a 1.x card.
        run.report.error(
            "card.missing-field",
            "/supportedInterfaces",
            f"declares protocol {declared}, which requires 'supportedInterfaces'"
            f" (the card has the {run.shape} layout: 'url' without 'supportedInterfaces')",
        )
    else:
        # Common in the wild (even the v0.3.0 spec sample says 0.2.9); the layout decides.
        run.report.info(
            "card.layout-version-mismatch",
            "/protocolVersion",
            f"declares protocol {declared} but has the {run.shape} layout; read as {run.shape}",
        )

"""Which layout a card has: v0.2, v0.3, v1.0 or unknown."""

from __future__ import annotations

from typing import Any, Literal

Shape = Literal["v0.2", "v0.3", "v1.0", "unknown"]


def detect_shape(data: dict[str, Any]) -> Shape:
    """Classify by structure, as corpus MANIFEST.tsv does; the declared version is a hint only."""
    if not isinstance(data, dict):
        return "unknown"
    if "supportedInterfaces" in data:
        return "v1.0"
    declared = data.get("protocolVersion")
    if isinstance(declared, str) and declared.strip().startswith("0.3"):
        return "v0.3"
    if "url" in data:
        if "preferredTransport" in data or "additionalInterfaces" in data:
            return "v0.3"
        return "v0.2"
    return "unknown"

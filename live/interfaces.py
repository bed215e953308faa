"""The endpoints an agent's card declares, as the live checks address them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"
GRPC = "GRPC"

_BINDINGS = {"JSONRPC": JSONRPC, "JSON-RPC": JSONRPC, "HTTP+JSON": HTTP_JSON, "REST": HTTP_JSON}


@dataclass(frozen=True)
class Interface:
    url: str
    binding: str  # JSONRPC, HTTP+JSON, GRPC, or what the card said
    version: str  # major.minor: "1.0", "0.3"

    @property
    def legacy(self) -> bool:
        """A v0.3 (or older) interface: slash method names, ``kind`` fields, ``/v1/`` paths."""
        return not self.version.startswith("1.")

    def label(self) -> str:
        return f"{self.binding} {self.version} {self.url}"

    def versioned(self) -> str:
        """What its report rows name when the card declares its URL in more than one protocol
        version (spec 3.6.2): the URL and the version."""
        return f"{self.url} (A2A {self.version})"


def major_minor(text: Any, default: str) -> str:
    """``0.3.0`` -> ``0.3``; anything unreadable -> ``default``."""
    if not isinstance(text, str):
        return default
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return default
    return f"{int(parts[0])}.{int(parts[1])}"


def binding_of(text: Any) -> str:
    name = text.strip().upper() if isinstance(text, str) else ""
    return _BINDINGS.get(name, name or "unknown")


def interfaces_of(card: dict[str, Any], shape: str) -> list[Interface]:
    """Each declared interface once (the same URL, binding and version twice is one interface;
    one URL with two protocol versions is two, spec 3.6.2). A v0.3 card (``shape``) is
    normalised to ``supportedInterfaces`` with its own protocolVersion."""
    default = "0.3" if shape in ("v0.2", "v0.3") else "1.0"
    seen: set[Interface] = set()
    out: list[Interface] = []
    for item in card.get("supportedInterfaces") or []:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        interface = Interface(
            url=item["url"].strip(),
            binding=binding_of(item.get("protocolBinding")),
            version=major_minor(item.get("protocolVersion"), default),
        )
        if interface not in seen:
            seen.add(interface)
            out.append(interface)
    return out


def requires_auth(card: dict[str, Any]) -> bool:
    """The card asks callers for credentials (a non-empty security requirement): the registry
    has none, so it does not call such an agent (its answers would only say 401)."""
    requirements = card.get("securityRequirements")
    if not isinstance(requirements, list):
        return False
    return any(isinstance(entry, dict) and entry for entry in requirements)

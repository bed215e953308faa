from __future__ import annotations

from django.apps import AppConfig


class ProtocolsConfig(AppConfig):
    """The registry in the protocols agents speak: MCP at /mcp, A2A JSON-RPC, its own card."""

    name = "protocols"

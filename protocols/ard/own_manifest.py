"""The registry's own ARD manifest (``/.well-known/ard.json``): an ``application/ai-registry+json``
entry pointing at its search API, and its own A2A agent card."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, JsonResponse

from cards.ard import identifiers
from protocols.own_card import unsigned_card
from protocols.views import base_url


def manifest(base: str) -> dict[str, Any]:
    host = (urlsplit(base).hostname or "localhost").lower()
    card = unsigned_card(base)
    card_url = f"{base}/.well-known/agent-card.json"
    return {
        "specVersion": "1.0",
        "host": {"displayName": "A2A agent card registry", "identifier": host},
        "entries": [
            {
                "identifier": f"urn:air:{host}:registry:agents",
                "displayName": "A2A agent card registry",
                "type": "application/ai-registry+json",
                "url": f"{base}/ard/",
                "description": "ARD Registry API (search, explore, agents) over every A2A agent "
                "card this registry has verified, validated and indexed, with A2A filters: "
                "inputModes, outputModes, schema, signature, health, extensions.",
                "tags": ["registry", "search", "a2a"],
                "representativeQueries": [
                    "find an agent that can convert currencies",
                    "which agents accept application/json;schema=agentQuery",
                    "agents with a verified signature that summarise documents",
                ],
            },
            {
                "identifier": identifiers.derived(card_url, card["name"]),
                "displayName": card["name"],
                "type": "application/a2a-agent-card+json",
                "url": card_url,
                "description": card["description"],
                "capabilities": [skill["id"] for skill in card["skills"]],
                "representativeQueries": [
                    "find agents that accept this JSON payload",
                    "check whether my message is valid for an agent",
                ],
            },
        ],
    }


def ard_manifest_view(request: HttpRequest) -> JsonResponse:
    response = JsonResponse(manifest(base_url(request)))
    response["Cache-Control"] = "public, max-age=300"
    return response

"""The registry's own A2A v1.0 agent card, signed with the key behind /.well-known/jwks.json.

It declares the input/output-schemas extension (seed 000) with ``agentQuery`` and
``agentQueryResult`` and the task-progress extension (seed 002). The signature is a detached
JWS over the a2a-sdk canonical form (cards.signatures.canonical.sdk_form), so the registry's own
verifier, and a2a-sdk's, accept it.
"""

from __future__ import annotations

import json
from typing import Any

from cards import signing_keys
from cards.progress import EXTENSION_URI as TASK_PROGRESS_URI
from cards.reads.params import MAX_LENGTH
from cards.signatures.canonical import sdk_form
from cards.signatures.jose import b64url_encode
from schemas_app.known_extensions import SCHEMAS_EXTENSION_URI

QUERY = "agentQuery"
RESULT = "agentQueryResult"
QUERY_MODE = f"application/json;schema={QUERY}"
RESULT_MODE = f"application/json;schema={RESULT}"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

FILTER_PROPERTIES: dict[str, Any] = {
    "tag": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 20},
    "skill": {"type": "string", "maxLength": 200},
    "input_mode": {"type": "string", "maxLength": 500},
    "output_mode": {"type": "string", "maxLength": 500},
    "schema": {"type": "string", "maxLength": 200},
    "extension": {"type": "string", "maxLength": 2048},
    "verified": {"type": "boolean"},
    "signed": {"type": "boolean"},
    "health": {
        "type": "array",
        "items": {"enum": ["healthy", "degraded", "unreachable", "gone", "unknown"]},
        "maxItems": 5,
    },
    "provider": {"type": "string", "maxLength": 200},
    "streaming": {"type": "boolean"},
}

AGENT_QUERY: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "Agent query",
    "description": "Find agents: by words, by the registry's filters, or by a JSON payload "
    "their input schemas must accept. An empty text lists every agent, as an empty search does "
    "at every door of the registry.",
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "maxLength": MAX_LENGTH,
            "description": "What the agent should do.",
        },
        "filters": {
            "type": "object",
            "properties": FILTER_PROPERTIES,
            "additionalProperties": False,
        },
        "payload": {"description": "A JSON value the agents must accept as input."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
    },
    "anyOf": [{"required": ["text"]}, {"required": ["filters"]}, {"required": ["payload"]}],
    "additionalProperties": False,
    # Valid queries a caller can start from (and the live checks send, docs/live-checks.md).
    "examples": [
        {"text": "translate documents to French", "limit": 5},
        {"filters": {"tag": ["search"], "signed": True}},
        {"payload": {"a": "Lion", "b": "Tiger"}},
    ],
}

# The outcome of the registry's last live checks of an agent (docs/live-checks.md).
LIVE_OUTCOME: dict[str, Any] = {
    "type": "object",
    "description": "The registry's last live checks of the agent's own endpoint: pass, fail, "
    "or not-checked (never checked, or nothing it declares can be checked).",
    "required": ["outcome", "checkedAt"],
    "properties": {
        "outcome": {"enum": ["pass", "fail", "not-checked"]},
        "checkedAt": {"type": ["string", "null"], "format": "date-time"},
        "counts": {
            "type": ["object", "null"],
            "description": "Checks by outcome.",
            "properties": {
                name: {"type": "integer", "minimum": 0} for name in ("pass", "warn", "fail", "skip")
            },
        },
    },
}

AGENT_QUERY_RESULT: dict[str, Any] = {
    "$schema": DRAFT,
    "title": "Agent query result",
    "type": "object",
    "required": ["agents", "truncated"],
    "properties": {
        "agents": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "name", "cardUrl", "score"],
                "properties": {
                    "id": {"type": "string", "description": "The registry's id of the agent."},
                    "identifiers": {"type": "array", "items": {"type": "string"}},
                    "name": {"type": "string"},
                    "cardUrl": {"type": "string"},
                    "registryUrl": {"type": "string"},
                    "matchedSkills": {"type": "array", "items": {"type": "string"}},
                    "score": {"type": "number", "minimum": 0, "maximum": 100},
                    "live": LIVE_OUTCOME,
                },
            },
        },
        "truncated": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def _skill(
    ident: str, name: str, description: str, tags: list[str], example: str
) -> dict[str, Any]:
    return {
        "id": ident,
        "name": name,
        "description": description,
        "tags": tags,
        "examples": [example],
        "inputModes": ["text/plain", QUERY_MODE],
        "outputModes": ["text/plain", RESULT_MODE],
    }


def unsigned_card(base_url: str) -> dict[str, Any]:
    """The card for a registry served at ``base_url`` (no trailing slash)."""
    return {
        "name": "A2A agent card registry",
        "description": "Finds A2A agents: by need, by a JSON payload their input schemas accept, "
        "and checks a message for an agent against its declared schemas.",
        "version": "1.0.0",
        "provider": {"organization": "A2A agent card registry", "url": base_url + "/"},
        "documentationUrl": base_url + "/api/docs",
        "supportedInterfaces": [
            {"url": base_url + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extensions": [
                {
                    "uri": SCHEMAS_EXTENSION_URI,
                    "description": "Structured agent queries (agentQuery) and results "
                    "(agentQueryResult) as JSON data parts.",
                },
                {
                    "uri": TASK_PROGRESS_URI,
                    "description": "Progress of longer queries in task metadata.",
                },
            ],
        },
        "defaultInputModes": ["text/plain", QUERY_MODE],
        "defaultOutputModes": ["text/plain", RESULT_MODE],
        "skills": [
            _skill(
                "find-agents",
                "Find agents by need",
                "Ranks indexed A2A agents for a need given in words, with optional filters "
                "(tag, skill, modes, schema, extension, verified publisher, signed, health, "
                "provider, streaming).",
                ["search", "discovery", "registry"],
                '{"text": "translate documents to French", "limit": 5}',
            ),
            _skill(
                "find-agents-accepting",
                "Find agents accepting a payload",
                "Lists the agents and skills whose declared input JSON Schemas accept a payload.",
                ["schemas", "discovery", "registry"],
                '{"payload": {"a": "Lion", "b": "Tiger"}}',
            ),
            _skill(
                "check-message",
                "Check a message for an agent",
                "Judges an A2A message for one indexed agent by the input/output-schemas flow.",
                ["validation", "schemas", "registry"],
                "check this message for agent 6f1c...",
            ),
        ],
        "schemas": {QUERY: AGENT_QUERY, RESULT: AGENT_QUERY_RESULT},
    }


def signed_card(base_url: str) -> dict[str, Any]:
    """The card with one Ed25519 signature (a2a-sdk canonical form) by the active key."""
    card = unsigned_card(base_url)
    key = signing_keys.active_key()
    header = {
        "alg": signing_keys.ALGORITHM,
        "kid": key.kid,
        "typ": "JOSE",
        "jku": base_url + "/.well-known/jwks.json",
    }
    protected = b64url_encode(json.dumps(header, separators=(",", ":")).encode())
    payload = sdk_form(card).encoded
    signature = key.private_key.sign(f"{protected}.{payload}".encode("ascii"))
    card["signatures"] = [{"protected": protected, "signature": b64url_encode(signature)}]
    return card

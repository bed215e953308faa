"""The cards the live test agents publish: one structure for every agent, so the registry's
checks find the same skills, schemas and extensions on the well-behaved agent and on each
broken one.

The structure follows the shared seeds: seed 000 (input/output schemas: the card's top-level
``schemas`` map, modes ``application/json;schema=<name>``, the extension declared in
``capabilities.extensions``) and seed 002 (task progress metadata, declared the same way).
"""

from __future__ import annotations

import copy
from typing import Any

SCHEMAS_EXTENSION = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)
PROGRESS_EXTENSION = "https://a2a-protocol.org/extensions/task-progress/v1"

INPUT_SCHEMA = "fightComparison"
OUTPUT_SCHEMA = "fightVerdict"

# Paths of the two declared interfaces under the agent's origin.
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
CARD_PATH = "/.well-known/agent-card.json"

SCHEMAS: dict[str, dict[str, Any]] = {
    INPUT_SCHEMA: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": {"description": "The name of the first contestant", "type": "string"},
            "b": {"description": "The name of the second contestant", "type": "string"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
        "examples": [{"a": "Lion", "b": "Tiger"}],
    },
    OUTPUT_SCHEMA: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "winner": {"description": "The name of the winner", "type": "string"},
            "probability": {"type": "number", "minimum": 0, "maximum": 1},
            "explanation": {"type": "string"},
        },
        "required": ["winner", "probability", "explanation"],
        "additionalProperties": False,
        "examples": [
            {"winner": "Tiger", "probability": 0.65, "explanation": "Heavier and stronger."}
        ],
    },
}


def schema_mode(name: str) -> str:
    """The media type naming a declared schema (seed 000, section 1)."""
    return f"application/json;schema={name}"


def schema_name(media_type: str) -> str | None:
    """The schema a media type names (``application/json; schema=x`` -> ``x``), or None."""
    kind, _, parameters = media_type.partition(";")
    if kind.strip().lower() != "application/json":
        return None
    for parameter in parameters.split(";"):
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "schema" and value.strip():
            return value.strip().strip('"')
    return None


INPUT_MODE = schema_mode(INPUT_SCHEMA)
OUTPUT_MODE = schema_mode(OUTPUT_SCHEMA)

_SKILLS: list[dict[str, Any]] = [
    {
        "id": "compare",
        "name": "Fight comparison",
        "description": "Says who would win a fight between contestants a and b.",
        "tags": ["comparison"],
        "examples": ['{"a": "Lion", "b": "Tiger"}'],
        "inputModes": [INPUT_MODE],
        "outputModes": [OUTPUT_MODE],
    },
    {
        "id": "echo",
        "name": "Echo",
        "description": "Answers the text it is sent.",
        "tags": ["echo"],
        "examples": ["Hello, agent"],
        "inputModes": ["text/plain"],
        "outputModes": ["text/plain"],
    },
]

_EXTENSIONS: list[dict[str, Any]] = [
    {
        "uri": SCHEMAS_EXTENSION,
        "description": "Structured input and output declared as JSON Schemas",
    },
    {
        "uri": PROGRESS_EXTENSION,
        "required": False,
        "description": "Structured task progress reporting",
        "params": {"maxTrackers": 20, "maxMessageChars": 512, "maxIdChars": 128},
    },
]

# A bearer scheme in the v1.0 card shape (a oneof wrapper; requirements hold scope lists).
BEARER_SECURITY: dict[str, Any] = {
    "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
    "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
}


def card_v1(
    *,
    name: str,
    origin: str,
    interface_origin: str | None = None,
    with_schemas: bool = True,
    security: bool = False,
    text_mode: str = "text/plain",
    echo_modes: bool = True,
) -> dict[str, Any]:
    """A v1.0 card: JSONRPC and HTTP+JSON interfaces (protocolVersion 1.0) under
    ``interface_origin`` (the card's own origin unless given), the two skills, both
    extensions and, unless ``with_schemas`` is false, the top-level ``schemas`` map.
    ``text_mode``: the echo skill's input mode and the card's default (``text``, as the
    a2a-python, a2a-js and v0.3 samples write it); ``echo_modes`` false: the echo skill
    declares no modes of its own (it takes the card's defaults)."""
    where = interface_origin or origin
    card: dict[str, Any] = {
        "name": name,
        "description": f"{name}: a test agent served on loopback.",
        "supportedInterfaces": [
            {"url": where + JSONRPC_PATH, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": where + REST_PATH, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "provider": {"organization": "Registry test suite", "url": origin},
        "version": "1.0.0",
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extensions": copy.deepcopy(_EXTENSIONS),
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": copy.deepcopy(_SKILLS),
    }
    echo = card["skills"][1]
    echo["inputModes"] = [text_mode]
    card["defaultInputModes"] = [text_mode]
    if not echo_modes:
        del echo["inputModes"], echo["outputModes"]
    if security:
        card.update(copy.deepcopy(BEARER_SECURITY))
    if with_schemas:
        card["schemas"] = copy.deepcopy(SCHEMAS)
    return card

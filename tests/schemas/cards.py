"""Cards for the schema tests: the seed 000 example as a complete v1.0 card, and helpers."""

from __future__ import annotations

import copy
import json
from typing import Any

from cards.crawling import card_ingest
from cards.models import Agent
from registry.http import FetchResult
from schemas_app.known_extensions import SCHEMAS_EXTENSION_URI, TASK_PROGRESS_URI
from tests.factories import minimal_card

DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"

# Seed 000, "Example AgentCard declaration", verbatim (schemas and skill).
FIGHT_COMPARISON: dict[str, Any] = {
    "$schema": DRAFT_2020,
    "type": "object",
    "properties": {
        "a": {"description": "The name of the first contestant", "type": "string"},
        "b": {"description": "The name of the second contestant", "type": "string"},
    },
    "required": ["a", "b"],
    "additionalProperties": False,
}
FIGHT_RESPONSE: dict[str, Any] = {
    "$schema": DRAFT_2020,
    "type": "object",
    "properties": {
        "winner": {
            "title": "Winner",
            "description": "The name of the winner of the fight",
            "type": "string",
        },
        "probability": {
            "title": "Probability",
            "description": "The probability of the winner winning the fight",
            "type": "number",
            "minimum": 0,
            "maximum": 1,
        },
        "explanation": {
            "title": "Explanation",
            "description": "A freeform field justifying the reason for choosing the winner",
            "type": "string",
        },
    },
    "required": ["winner", "probability", "explanation"],
    "additionalProperties": False,
}
FIGHT_SKILL: dict[str, Any] = {
    "id": "fight-comparison",
    "name": "Fight Comparison",
    "description": (
        "Determines who would win in a hypothetical fight between two contestants. Requires a "
        'data payload with two fields: "a" (first contestant) and "b" (second contestant). '
        "Returns the winner, probability of victory, and an explanation."
    ),
    "inputModes": ["text/plain", "application/json;schema=fightComparison"],
    "outputModes": ["text/plain", "application/json;schema=fightResponse"],
    "examples": [
        '{"a": "Superman", "b": "Batman"}',
        '{"a": "Lion", "b": "Tiger"}',
        '{"a": "Godzilla", "b": "King Kong"}',
    ],
    "tags": ["comparison", "fight", "ai-analysis", "prediction"],
}

# Seed 000 section 2, "Example user message".
SEED_MESSAGE: dict[str, Any] = {
    "kind": "message",
    "messageId": 1,
    "role": "user",
    "parts": [
        {
            "kind": "data",
            "data": {"a": "100 duck sized horses", "b": "1 horse sized duck"},
            "metadata": {"mimeType": "application/json;schema=fightComparison"},
        }
    ],
}

# Seed 002 section 3.1, "Agent Card declaration".
TASK_PROGRESS_DECLARATION: dict[str, Any] = {
    "uri": TASK_PROGRESS_URI,
    "required": False,
    "description": "Structured task progress reporting",
    "params": {
        "maxTrackers": 20,
        "maxMessageChars": 512,
        "maxIdChars": 128,
        "recommendedMaxUpdatesPerSecond": 2,
    },
}


def schemas_extension() -> dict[str, Any]:
    return {
        "uri": SCHEMAS_EXTENSION_URI,
        "description": "Allow more deterministic invoking of tasks by providing JSON input "
        "corresponding to a provided schema",
    }


def fight_card(**overrides: Any) -> dict[str, Any]:
    """The seed 000 declaration completed into a valid v1.0 card."""
    card = minimal_card(
        name="Fight oracle",
        description="Predicts who wins a fight.",
        capabilities={"streaming": False, "extensions": [schemas_extension()]},
        schemas={
            "fightComparison": copy.deepcopy(FIGHT_COMPARISON),
            "fightResponse": copy.deepcopy(FIGHT_RESPONSE),
        },
        skills=[copy.deepcopy(FIGHT_SKILL)],
    )
    card.update(overrides)
    return card


def schema_card(schemas: dict[str, Any], *, modes: list[str] | None = None, **over: Any) -> dict:
    """A card declaring ``schemas``, with one skill taking each as input."""
    names = list(schemas)
    return minimal_card(
        capabilities={"extensions": [schemas_extension()]},
        schemas=schemas,
        skills=[
            {
                "id": "structured",
                "name": "Structured",
                "description": "Takes structured input.",
                "tags": ["structured"],
                "inputModes": modes
                if modes is not None
                else ["text/plain", *[f"application/json;schema={n}" for n in names]],
                "outputModes": ["text/plain"],
            }
        ],
        **over,
    )


def ingest(agent: Agent, card: dict[str, Any] | bytes) -> str:
    """Ingest a new version of an existing agent's card, without a network round trip."""
    body = card if isinstance(card, bytes) else json.dumps(card).encode()
    result = FetchResult.local(agent.card_url or agent.url, body)
    return card_ingest(agent_id=agent.pk, result=result)


def codes(findings: list[Any]) -> list[str]:
    return [f["code"] if isinstance(f, dict) else f.code for f in findings]


def by_code(findings: list[Any], code: str) -> list[dict[str, str]]:
    out = []
    for f in findings:
        item = f if isinstance(f, dict) else f.as_dict()
        if item["code"] == code:
            out.append(item)
    return out

"""A live registry (registry.asgi under uvicorn, in a thread) on 127.0.0.1, test database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.factories import agent_from_card, minimal_card
from tests.support import serving_asgi

FIGHT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
SCHEMAS_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)


@pytest.fixture
def live_registry(transactional_db: None) -> Iterator[str]:
    with serving_asgi() as base:
        yield base


@pytest.fixture
def fight_agent(transactional_db: None) -> Any:
    card = minimal_card(
        name="Fight judge",
        description="Decides who would win a fight.",
        capabilities={"streaming": False, "extensions": [{"uri": SCHEMAS_URI}]},
        schemas={"fightComparison": FIGHT},
        skills=[
            {
                "id": "fight-comparison",
                "name": "Fight Comparison",
                "description": "Who would win a fight.",
                "tags": ["fight"],
                "inputModes": ["text/plain", "application/json;schema=fightComparison"],
                "outputModes": ["text/plain"],
            }
        ],
    )
    return agent_from_card(card)

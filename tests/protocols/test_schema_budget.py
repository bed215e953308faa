"""MCP and A2A payload matching run under the schema budget too (issue 17, item 1).

The stored bomb (``items: anyOf [pattern "^(a|aa)+(?=c)$", string]``) registered by a real
account; anonymous callers send 4,000 distinct strings of ``a``s. Before the budget, MCP
``find_agents_accepting`` held the server for about 7 s of CPU.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model

from tests.factories import agent_from_card, minimal_card
from tests.protocols.conftest import SCHEMAS_URI
from tests.support import mcp_call

pytestmark = pytest.mark.django_db(transaction=True)

BOMB = {"type": "array", "items": {"anyOf": [{"pattern": "^(a|aa)+(?=c)$"}, {"type": "string"}]}}


def hostile_strings(count: int) -> list[str]:
    return ["a" * 28 + str(i) for i in range(count)]


@pytest.fixture
def bomb_agent(transactional_db: None) -> Any:
    card = minimal_card(
        name="Bomb",
        capabilities={"extensions": [{"uri": SCHEMAS_URI}]},
        schemas={"bomb": BOMB},
        skills=[
            {
                "id": "strings",
                "name": "Strings",
                "description": "Takes strings.",
                "tags": ["strings"],
                "inputModes": ["application/json;schema=bomb"],
                "outputModes": ["text/plain"],
            }
        ],
    )
    agent = agent_from_card(card)
    agent.submitted_by = get_user_model().objects.create_user(
        username="bomber", password="x-long-password-1"
    )
    agent.save(update_fields=["submitted_by"])
    return agent


def _find(base: str, payload: Any) -> Any:
    return mcp_call(base, "find_agents_accepting", {"payload": payload})


def test_mcp_find_agents_accepting_stops_at_the_budget(live_registry: str, bomb_agent: Any) -> None:
    started = time.process_time()
    result = _find(live_registry, hostile_strings(4000))
    cpu = time.process_time() - started  # server and client: both run in this process
    assert result.isError
    assert "budget" in result.content[0].text
    assert cpu < 1.5, cpu
    small = _find(live_registry, hostile_strings(5))
    assert not small.isError
    assert [a["id"] for a in small.structuredContent["agents"]] == [str(bomb_agent.pk)]


def test_a2a_structured_query_with_a_payload_stops_at_the_budget(
    live_registry: str, bomb_agent: Any
) -> None:
    def send(payload: Any) -> dict[str, Any]:
        call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": "1", "role": "user",
            "parts": [{"kind": "data", "data": {"payload": payload},
                       "metadata": {"mimeType": "application/json;schema=agentQuery"}}],
        }}}  # fmt: skip
        response = httpx.post(
            live_registry + "/a2a",
            content=json.dumps(call).encode(),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        assert response.status_code == 200
        return dict(response.json())

    started = time.process_time()
    answer = send(hostile_strings(4000))
    cpu = time.process_time() - started
    assert answer["error"]["code"] == -32602
    assert "budget" in answer["error"]["message"]
    assert cpu < 1.5, cpu
    fine = send(hostile_strings(5))
    assert fine["result"]["status"]["state"] == "completed"

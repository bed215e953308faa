"""The MCP server at /mcp, driven by the official mcp client over HTTP against a live server."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from tests.support import mcp_session

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_lists_five_tools_each_with_input_and_output_schemas(live_registry: str) -> None:
    tools = mcp_session(live_registry, lambda s: s.list_tools()).tools
    names = {t.name for t in tools}
    assert names == {
        "search_agents", "get_agent", "find_agents_accepting", "check_message", "list_schemas"
    }  # fmt: skip
    for tool in tools:
        assert tool.inputSchema["type"] == "object"
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object"


def test_search_finds_an_agent_by_schema_filter_and_text(
    live_registry: str, fight_agent: Any
) -> None:
    result = mcp_session(
        live_registry,
        lambda s: s.call_tool("search_agents", {"text": "fight", "schema": "fightComparison"}),
    )
    assert not result.isError
    assert [r["id"] for r in result.structuredContent["results"]] == [str(fight_agent.pk)]
    missing = mcp_session(
        live_registry, lambda s: s.call_tool("search_agents", {"tag": ["no-such-tag"]})
    )
    assert missing.structuredContent["results"] == []


def test_find_accepting_get_agent_card_resource_and_check_message(
    live_registry: str, fight_agent: Any
) -> None:
    async def body(session: ClientSession) -> Any:
        found = await session.call_tool("find_agents_accepting", {"payload": {"a": "x", "b": "y"}})
        rejected = await session.call_tool("find_agents_accepting", {"payload": {"a": 1}})
        agent = await session.call_tool("get_agent", {"id": str(fight_agent.pk)})
        card = await session.read_resource(f"agent://{fight_agent.pk}/card")  # type: ignore[arg-type]
        message = {
            "parts": [
                {"kind": "data", "data": {"a": "x"},
                 "metadata": {"mimeType": "application/json;schema=fightComparison"}}
            ]
        }  # fmt: skip
        check = await session.call_tool(
            "check_message", {"agent_id": str(fight_agent.pk), "message": message}
        )
        schemas = await session.call_tool("list_schemas", {})
        return found, rejected, agent, card, check, schemas

    found, rejected, agent, card, check, schemas = mcp_session(live_registry, body)
    assert [a["id"] for a in found.structuredContent["agents"]] == [str(fight_agent.pk)]
    assert found.structuredContent["agents"][0]["matches"][0]["skills"] == ["fight-comparison"]
    assert rejected.structuredContent["agents"] == []
    assert agent.structuredContent["name"] == "Fight judge"
    assert "fightComparison" in agent.structuredContent["schemas"]
    assert json.loads(card.contents[0].text)["name"] == "Fight judge"
    assert check.structuredContent["outcome"] == "structured-input-error"
    assert check.structuredContent["errors"][0]["pointer"].startswith("/parts/0/data")
    names = {row["name"] for row in schemas.structuredContent["results"]}
    assert "fightComparison" in names


def test_errors_are_tool_errors_with_the_api_messages(live_registry: str) -> None:
    async def body(session: ClientSession) -> Any:
        return (
            await session.call_tool("get_agent", {"id": "00000000-0000-0000-0000-000000000000"}),
            await session.call_tool("get_agent", {"id": "not-a-uuid"}),
            await session.call_tool("search_agents", {"input_mode": "not a media type;;"}),
            await session.call_tool("search_agents", {"limit": 1000}),
            await session.call_tool("no_such_tool", {}),
        )

    missing, bad_id, bad_mode, bad_limit, unknown = mcp_session(live_registry, body)
    assert missing.isError and missing.content[0].text == "No agent with this id."
    assert bad_id.isError and bad_id.content[0].text == "No agent with this id."
    assert bad_mode.isError and "input_mode" in bad_mode.content[0].text
    assert bad_limit.isError
    assert bad_limit.content[0].text == "limit must be an integer from 1 to 100"
    assert unknown.isError and "no_such_tool" in unknown.content[0].text


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, -32700),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "find_agents_accepting", "arguments": {"payload": "x" * 300_000}}}).encode(),
         413, -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "find_agents_accepting", "arguments": {"payload": json.loads(
                "[" * 200 + "]" * 200)}}}).encode(), 400, -32600),
    ],
    ids=["parse-error", "oversized", "deeply-nested"],
)  # fmt: skip
def test_bad_json_rpc_gets_json_rpc_error_objects(
    live_registry: str, body: bytes, status: int, code: int
) -> None:
    response = httpx.post(live_registry + "/mcp", content=body, headers=HEADERS)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_an_unknown_method_is_method_not_found(live_registry: str) -> None:
    call = {"jsonrpc": "2.0", "id": 7, "method": "agents/explode", "params": {}}
    response = httpx.post(live_registry + "/mcp", json=call, headers=HEADERS)
    assert response.json()["error"]["code"] == -32601

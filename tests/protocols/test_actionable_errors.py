"""Errors a client can act on (issue 39 item 8), through the official clients against a live
registry: a2a-sdk's client keeps only an error's message, so the message names the first place
and reason; MCP refuses a string where an integer is expected, as the REST API does; MCP's
``serverInfo`` is the registry's name and version, not the SDK's."""

from __future__ import annotations

import asyncio
import importlib.metadata
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError, InvalidParamsError
from google.protobuf import json_format
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from tests.support import mcp_call

pytestmark = pytest.mark.django_db(transaction=True)

QUERY_MODE = "application/json;schema=agentQuery"


def _sdk_send(base: str, data: dict[str, Any]) -> Any:
    """SendMessage of one agentQuery data part through a2a-sdk; its answer or its error."""

    async def run() -> Any:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            transport = JsonRpcTransport(http, card, card.supported_interfaces[0].url)
            part = {"data": data, "metadata": {"mimeType": QUERY_MODE}}
            message = {"messageId": "m1", "role": "ROLE_USER", "parts": [part]}
            request = json_format.ParseDict({"message": message}, pb.SendMessageRequest())
            try:
                return json_format.MessageToDict(await transport.send_message(request))
            except A2AError as error:
                return error

    return asyncio.run(run())


def test_the_a2a_sdk_client_sees_the_first_pointer_and_reason_in_the_message(
    live_registry: str,
) -> None:
    error = _sdk_send(live_registry, {"text": "translate", "limit": 0})
    assert isinstance(error, InvalidParamsError), error
    text = str(error)
    assert "does not match agentQuery" in text
    assert "/message/parts/0/data/limit" in text and "minimum of 1" in text, text
    several = _sdk_send(live_registry, {"text": 5, "limit": 0})
    assert isinstance(several, InvalidParamsError)
    assert "/message/parts/0/data/" in str(several) and "1 more in data.errors" in str(several)


def test_the_same_pointer_is_in_data_errors_for_clients_that_read_them(live_registry: str) -> None:
    part = {"data": {"text": "translate", "limit": 0}, "metadata": {"mimeType": QUERY_MODE}}
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [part]}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    error = httpx.post(live_registry + "/a2a", json=call).json()["error"]
    first = error["data"]["errors"][0]
    assert first["pointer"] == "/message/parts/0/data/limit"
    assert f"{first['pointer']}: {first['message']}" in error["message"]


def _rest_refusal(base: str) -> str:
    response = httpx.post(f"{base}/api/v1/schemas/match", json={"payload": {}, "limit": "5"})
    assert response.status_code == 400, response.text
    return str(response.json()["detail"])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_agents", {"limit": "5"}),
        ("find_agents_accepting", {"payload": {"a": 1}, "limit": "5"}),
        ("list_schemas", {"limit": "5"}),
    ],
)
def test_a_string_limit_is_refused_by_mcp_as_by_rest(
    live_registry: str, tool: str, arguments: dict[str, Any]
) -> None:
    result = mcp_call(live_registry, tool, arguments)
    assert result.isError, result
    assert result.content[0].text == _rest_refusal(live_registry)
    assert not mcp_call(live_registry, tool, {**arguments, "limit": 5}).isError  # the control


def test_a_string_boolean_is_refused_by_mcp(live_registry: str) -> None:
    result = mcp_call(live_registry, "search_agents", {"verified": "true"})
    assert result.isError and result.content[0].text == "verified must be true or false"
    assert not mcp_call(live_registry, "search_agents", {"verified": True}).isError


def test_the_mcp_server_reports_the_registry_not_the_sdk(live_registry: str) -> None:
    async def run() -> Any:
        async with streamablehttp_client(live_registry + "/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                return await session.initialize()

    info = asyncio.run(run()).serverInfo
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    assert (info.name, info.version) == (project["name"], project["version"])
    assert info.version != importlib.metadata.version("mcp")

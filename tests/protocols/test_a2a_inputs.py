"""Malformed and unusual input on /a2a (issue 17 item 14, issue 20): a2a-sdk's float limits,
lone surrogates, over-long text. Each is an answer or a JSON-RPC error, never a 500."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

pytestmark = pytest.mark.django_db(transaction=True)

QUERY_MODE = "application/json;schema=agentQuery"


def _sdk_send(base: str, data: dict[str, Any]) -> dict[str, Any]:
    """SendMessage of one agentQuery data part through a2a-sdk (numbers become doubles)."""

    async def run() -> dict[str, Any]:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            transport = JsonRpcTransport(http, card, card.supported_interfaces[0].url)
            part = {"data": data, "metadata": {"mimeType": QUERY_MODE}}
            message = {"messageId": "m1", "role": "ROLE_USER", "parts": [part]}
            request = json_format.ParseDict({"message": message}, pb.SendMessageRequest())
            return dict(json_format.MessageToDict(await transport.send_message(request)))

    return asyncio.run(run())


def _raw(base: str, body: bytes | str) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else body
    return httpx.post(base + "/a2a", content=content, headers={"Content-Type": "application/json"})


def _send_call(parts: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 9, "method": "SendMessage",
         "params": {"message": {"messageId": "1", "role": "ROLE_USER", "parts": parts}}}
    )  # fmt: skip


def test_the_sdks_float_limit_with_a_payload_is_answered(
    live_registry: str, fight_agent: Any
) -> None:
    response = _sdk_send(live_registry, {"payload": {"a": "x", "b": "y"}, "limit": 5})
    result = response["task"]["artifacts"][0]["parts"][0]["data"]
    assert [a["id"] for a in result["agents"]] == [str(fight_agent.pk)]


@pytest.mark.parametrize("limit", ["3.0", "1.0", "100.0"])
def test_an_integral_float_limit_is_an_integer(
    live_registry: str, fight_agent: Any, limit: str
) -> None:
    data = {"filters": {"tag": ["fight"]}, "limit": 0}
    part = {"data": data, "metadata": {"mimeType": QUERY_MODE}}
    body = _send_call([part]).replace('"limit": 0', f'"limit": {limit}')
    response = _raw(live_registry, body)
    assert response.status_code == 200
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_fractional_limit_is_a_structured_input_error(live_registry: str) -> None:
    part = {"data": {"text": "fight", "limit": 2.5}, "metadata": {"mimeType": QUERY_MODE}}
    error = _raw(live_registry, _send_call([part])).json()["error"]
    assert error["code"] == -32602
    assert error["data"]["errors"][0]["pointer"] == "/message/parts/0/data/limit"


def test_a_lone_surrogate_is_invalid_params(live_registry: str) -> None:
    body = _send_call([{"text": "fight PLACEHOLDER"}]).replace("PLACEHOLDER", "\\ud800")
    assert "\\ud800" in body
    response = _raw(live_registry, body)
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32602
    assert error["message"] == (
        "Invalid params: /params/message/parts/0/text contains an unpaired surrogate escape"
    )
    key = _send_call([{"text": "fight", "metadata": {"PLACEHOLDER": 1}}]).replace(
        "PLACEHOLDER", "\\udfff"
    )
    assert _raw(live_registry, key).json()["error"]["code"] == -32602


def test_deep_brackets_and_nul_keys_are_json_rpc_errors(live_registry: str) -> None:
    deep = _raw(live_registry, b"[" * 100_000).json()["error"]
    assert deep == {"code": -32600, "message": "Request nested deeper than 32 levels"}
    part = {"data": {"payload": {"a\x00": 1}}, "metadata": {"mimeType": QUERY_MODE}}
    nul = _raw(live_registry, _send_call([part]))
    assert nul.status_code == 200
    # Answered: no closed schema accepts a member name PostgreSQL cannot store (never a 500).
    assert nul.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_text_is_limited_to_the_apis_1000_characters(live_registry: str) -> None:
    over = _raw(live_registry, _send_call([{"text": "x" * 1001}])).json()["error"]
    assert over["code"] == -32602 and over["message"] == "text is longer than 1000 characters"
    assert "result" in _raw(live_registry, _send_call([{"text": "fight " * 166}])).json()
    part = {"data": {"text": "y" * 1001}, "metadata": {"mimeType": QUERY_MODE}}
    structured = _raw(live_registry, _send_call([part])).json()["error"]
    assert structured["data"]["errors"] == [
        {"pointer": "/message/parts/0/data/text", "message": "is longer than 1000 characters"}
    ]
    card = httpx.get(live_registry + "/.well-known/agent-card.json").json()
    assert card["schemas"]["agentQuery"]["properties"]["text"]["maxLength"] == 1000

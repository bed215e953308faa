"""The A2A endpoint, driven by a2a-sdk's own JSON-RPC client against a live server, branch by
branch of seed 000 section 3; the v0.3 ``message/send`` spelling and bad JSON-RPC over raw HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import jsonschema_rs
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError, InvalidParamsError, TaskNotFoundError
from google.protobuf import json_format

from cards.progress import EXTENSION_URI as PROGRESS_URI
from cards.progress import SCHEMA as PROGRESS_SCHEMA
from protocols.own_card import AGENT_QUERY_RESULT

pytestmark = pytest.mark.django_db(transaction=True)


def _data_part(data: Any, schema: str) -> dict[str, Any]:
    return {"data": data, "metadata": {"mimeType": f"application/json;schema={schema}"}}


def _send(base: str, parts: list[dict[str, Any]], task_id: str = "") -> Any:
    """SendMessage through a2a-sdk's transport; the response (or the client's error) as a dict."""

    async def run() -> Any:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            transport = JsonRpcTransport(http, card, card.supported_interfaces[0].url)
            message: dict[str, Any] = {"messageId": "m1", "role": "ROLE_USER", "parts": parts}
            if task_id:
                message["taskId"] = task_id
            request = json_format.ParseDict({"message": message}, pb.SendMessageRequest())
            try:
                response = await transport.send_message(request)
            except A2AError as error:
                return error
            return json_format.MessageToDict(response)

    return asyncio.run(run())


def _result(task: dict[str, Any]) -> dict[str, Any]:
    part = task["artifacts"][0]["parts"][0]
    assert part["metadata"]["mimeType"] == "application/json;schema=agentQueryResult"
    assert jsonschema_rs.validator_for(AGENT_QUERY_RESULT).is_valid(part["data"])
    return dict(part["data"])


def test_a_valid_agent_query_with_a_payload_becomes_a_completed_task(
    live_registry: str, fight_agent: Any
) -> None:
    response = _send(live_registry, [_data_part({"payload": {"a": "x", "b": "y"}}, "agentQuery")])
    task = response["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    result = _result(task)
    assert [a["id"] for a in result["agents"]] == [str(fight_agent.pk)]
    assert result["agents"][0]["matchedSkills"] == ["fight-comparison"]
    progress = task["metadata"][PROGRESS_URI]
    assert jsonschema_rs.validator_for(PROGRESS_SCHEMA).is_valid(progress)
    assert progress["trackers"][0]["status"] == "completed"


def test_plain_text_is_answered_by_the_search(live_registry: str, fight_agent: Any) -> None:
    task = _send(live_registry, [{"text": "fight judge"}])["task"]
    result = _result(task)
    assert result["agents"][0]["id"] == str(fight_agent.pk)
    assert result["agents"][0]["score"] == 100


def test_an_undeclared_schema_is_a_structured_input_error(live_registry: str) -> None:
    error = _send(live_registry, [_data_part({"a": "x"}, "fightComparison")])
    assert isinstance(error, InvalidParamsError)
    assert "no schema named 'fightComparison'" in str(error)


def test_data_that_does_not_match_agent_query_is_a_structured_input_error(
    live_registry: str,
) -> None:
    error = _send(live_registry, [_data_part({"limit": 0, "color": "red"}, "agentQuery")])
    assert isinstance(error, InvalidParamsError)
    assert "does not match agentQuery" in str(error)


def test_a_structured_message_for_an_existing_task_is_rejected(live_registry: str) -> None:
    task = _send(live_registry, [_data_part({"text": "anything"}, "agentQuery")])["task"]
    error = _send(live_registry, [_data_part({"text": "more"}, "agentQuery")], task["id"])
    assert isinstance(error, InvalidParamsError)
    assert "already running" in str(error)
    unknown = _send(live_registry, [{"text": "x"}], "no-such-task")
    assert isinstance(unknown, TaskNotFoundError) and "Task not found" in str(unknown)


def _rpc(base: str, body: bytes) -> dict[str, Any]:
    response = httpx.post(base + "/a2a", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    return dict(response.json())


def test_the_v03_spelling_answers_a_bare_task_with_kinds(
    live_registry: str, fight_agent: Any
) -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "1", "role": "user",
        "parts": [{"kind": "data", **_data_part({"filters": {"tag": ["fight"]}}, "agentQuery")}],
    }}}  # fmt: skip
    task = _rpc(live_registry, json.dumps(call).encode())["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["kind"] == "data"
    assert _result(task)["agents"][0]["id"] == str(fight_agent.pk)
    got = _rpc(live_registry, json.dumps(
        {"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": task["id"]}}
    ).encode())["result"]  # fmt: skip
    assert got["id"] == task["id"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{oops", -32700),
        (b"[1, 2]", -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "Explode", "params": {}}).encode(),
         -32601),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}).encode(),
         -32602),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                     "params": {"message": {"parts": [{"text": "x" * 300_000}]}}}).encode(),
         -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                     "params": json.loads('{"a":' * 100 + "1" + "}" * 100)}).encode(), -32600),
    ],
    ids=["parse", "not-an-object", "unknown-method", "no-message", "oversized", "deep"],
)  # fmt: skip
def test_bad_json_rpc_gets_error_objects(live_registry: str, body: bytes, code: int) -> None:
    assert _rpc(live_registry, body)["error"]["code"] == code

"""CancelTask, the A2A-Version a request asks for, and how each version spells a data part's
media type: a2a-sdk's own JSON-RPC client where it has the call, raw HTTP for the headers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError, TaskNotCancelableError, TaskNotFoundError
from google.protobuf import json_format

pytestmark = pytest.mark.django_db(transaction=True)

RESULT_MODE = "application/json;schema=agentQueryResult"


def _with_transport(base: str, call: Any) -> Any:
    """``call(transport)`` through a2a-sdk's JSON-RPC transport; its result or its error."""

    async def run() -> Any:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, base).get_agent_card()
            transport = JsonRpcTransport(http, card, card.supported_interfaces[0].url)
            try:
                return await call(transport)
            except A2AError as error:
                return error

    return asyncio.run(run())


def _new_task(base: str) -> dict[str, Any]:
    async def send(transport: JsonRpcTransport) -> Any:
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "anything"}]}
        request = json_format.ParseDict({"message": message}, pb.SendMessageRequest())
        return json_format.MessageToDict(await transport.send_message(request))

    return dict(_with_transport(base, send)["task"])


def _cancel(base: str, task_id: str) -> Any:
    async def cancel(transport: JsonRpcTransport) -> Any:
        return await transport.cancel_task(pb.CancelTaskRequest(id=task_id))

    return _with_transport(base, cancel)


def test_cancel_task_of_an_unknown_task_is_task_not_found(live_registry: str) -> None:
    error = _cancel(live_registry, "6f1c0000-0000-4000-8000-000000000000")
    assert isinstance(error, TaskNotFoundError)


def test_cancel_task_of_a_completed_task_is_not_cancelable(live_registry: str) -> None:
    task = _new_task(live_registry)
    error = _cancel(live_registry, task["id"])
    assert isinstance(error, TaskNotCancelableError) and "cannot be canceled" in str(error)


def test_the_v03_tasks_cancel_spelling_answers_the_same_codes(live_registry: str) -> None:
    task = _new_task(live_registry)
    for task_id, code in ((task["id"], -32002), ("nope", -32001)):
        call = {"jsonrpc": "2.0", "id": 5, "method": "tasks/cancel", "params": {"id": task_id}}
        answer = httpx.post(live_registry + "/a2a", json=call).json()
        assert answer["id"] == 5 and answer["error"]["code"] == code


def _get(base: str, **request: Any) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": "v", "method": "GetTask", "params": {"id": "nope"}}
    return dict(httpx.post(base + "/a2a", json=call, **request).json())


@pytest.mark.parametrize("version", ["99.0", "1.1", "2", "0.2", "latest", "1.0.0.0"])
def test_a_version_this_endpoint_does_not_speak_is_version_not_supported(
    live_registry: str, version: str
) -> None:
    answer = _get(live_registry, headers={"A2A-Version": version})
    assert answer["id"] == "v"
    assert answer["error"]["code"] == -32009
    assert "1.0 and 0.3" in answer["error"]["message"]
    # The error names itself in a google.rpc.ErrorInfo (spec 9.5; the live check JSONRPC-ERR-003).
    (info,) = answer["error"]["data"]
    assert (info["reason"], info["domain"]) == ("VERSION_NOT_SUPPORTED", "a2a-protocol.org")


def test_the_version_may_be_asked_for_as_a_query_parameter(live_registry: str) -> None:
    assert _get(live_registry, params={"A2A-Version": "99.0"})["error"]["code"] == -32009
    assert _get(live_registry, params={"A2A-Version": "1.0"})["error"]["code"] == -32001


@pytest.mark.parametrize("headers", [{"A2A-Version": "1.0"}, {"A2A-Version": "1.0.3"},
                                     {"A2A-Version": "0.3"}, {"A2A-Version": ""}, {}])  # fmt: skip
def test_the_versions_it_speaks_are_answered(live_registry: str, headers: dict[str, str]) -> None:
    assert _get(live_registry, headers=headers)["error"]["code"] == -32001


def test_a_v1_data_part_names_its_media_type_and_a_v03_part_only_its_metadata(
    live_registry: str,
) -> None:
    task = _new_task(live_registry)
    part = task["artifacts"][0]["parts"][0]
    assert part["mediaType"] == RESULT_MODE and part["metadata"]["mimeType"] == RESULT_MODE
    call = {"jsonrpc": "2.0", "id": 6, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "2", "role": "user",
        "parts": [{"kind": "text", "text": "anything"}],
    }}}  # fmt: skip
    old = httpx.post(live_registry + "/a2a", content=json.dumps(call)).json()["result"]
    old_part = old["artifacts"][0]["parts"][0]
    assert "mediaType" not in old_part and old_part["metadata"]["mimeType"] == RESULT_MODE
    kept = _get_task(live_registry, old["id"])
    assert kept["artifacts"][0]["parts"][0]["mediaType"] == RESULT_MODE


def _get_task(base: str, task_id: str) -> dict[str, Any]:
    async def get(transport: JsonRpcTransport) -> Any:
        return json_format.MessageToDict(await transport.get_task(pb.GetTaskRequest(id=task_id)))

    return dict(_with_transport(base, get))

"""The live test agents behave as agents.py says: the conformant ones (a2a-sdk's server and
the hand-made one) answer the live checks' probes and messages as the specification maps
them, and each broken one departs on its one rule. Plain httpx against real servers."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import jsonschema
import pytest

from tests.live.agents import (
    BROKEN_KINDS,
    LiveAgent,
    broken_agent,
    handmade_agent,
    sdk_agent,
)
from tests.live.cards import (
    INPUT_MODE,
    OUTPUT_MODE,
    OUTPUT_SCHEMA,
    PROGRESS_EXTENSION,
    SCHEMAS,
    SCHEMAS_EXTENSION,
    schema_name,
)

V1 = {"A2A-Version": "1.0"}
VALID = {"a": "Lion", "b": "Tiger"}
MISSING_B = {"a": "Lion"}

# Seed 002 section 8, the parts the agents use: trackers with an id, 0 <= progress <= total.
PROGRESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["trackers"],
    "properties": {
        "trackers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "progress": {"type": "number", "minimum": 0},
                    "total": {"type": "number", "minimum": 0},
                    "status": {"enum": ["running", "completed", "failed"]},
                },
            },
        }
    },
}

Starter = Callable[[], AbstractContextManager[LiveAgent]]
CONFORMANT: dict[str, Starter] = {"sdk": sdk_agent, "handmade": handmade_agent}


def data_message(data: Any) -> dict[str, Any]:
    part = {"data": data, "mediaType": INPUT_MODE, "metadata": {"mimeType": INPUT_MODE}}
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [part]}


def text_message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def rpc(
    agent: LiveAgent,
    method: str,
    params: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return httpx.post(agent.jsonrpc_url, json=body, headers=V1 if headers is None else headers)


def send(agent: LiveAgent, binding: str, message: dict[str, Any]) -> dict[str, Any]:
    """SendMessage over one binding; the SendMessageResponse (``task`` or ``message``)."""
    if binding == "JSONRPC":
        response = rpc(agent, "SendMessage", {"message": message})
        assert response.status_code == 200, response.text
        return dict(response.json()["result"])
    response = httpx.post(agent.rest_url + "/message:send", json={"message": message}, headers=V1)
    assert response.status_code == 200, response.text
    return dict(response.json())


def verdict_part(task: dict[str, Any]) -> dict[str, Any]:
    [artifact] = task["artifacts"]
    [part] = artifact["parts"]
    return dict(part)


@pytest.fixture(params=list(CONFORMANT))
def conformant(request: pytest.FixtureRequest) -> Iterator[LiveAgent]:
    with CONFORMANT[request.param]() as agent:
        yield agent


# --- The card -----------------------------------------------------------------------------


def test_the_card_declares_both_interfaces_both_skills_the_schemas_and_the_extensions(
    conformant: LiveAgent,
) -> None:
    card = httpx.get(conformant.card_url).json()

    assert conformant.card_url.startswith("http://127.0.0.1:")
    assert {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]} == {
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
    }
    skills = {skill["id"]: skill for skill in card["skills"]}
    assert skills["compare"]["inputModes"] == [INPUT_MODE]
    assert skills["compare"]["outputModes"] == [OUTPUT_MODE]
    assert skills["echo"]["inputModes"] == ["text/plain"] and skills["echo"]["examples"]
    for name in (schema_name(INPUT_MODE), schema_name(OUTPUT_MODE)):
        assert name is not None and card["schemas"][name]["required"]
        assert card["schemas"][name]["examples"]
    extensions = {extension["uri"] for extension in card["capabilities"]["extensions"]}
    assert {SCHEMAS_EXTENSION, PROGRESS_EXTENSION} <= extensions


def test_the_v03_card_of_the_sdk_agent_is_v03_shaped() -> None:
    with sdk_agent(version="0.3") as agent:
        card = httpx.get(agent.card_url).json()

    assert card["protocolVersion"] == "0.3.0"
    assert card["url"] == agent.jsonrpc_url and card["preferredTransport"] == "JSONRPC"
    assert card["additionalInterfaces"] == [{"transport": "HTTP+JSON", "url": agent.rest_url}]
    assert "supportedInterfaces" not in card and set(card["schemas"]) == set(SCHEMAS)


# --- Messages to the conformant agents ----------------------------------------------------


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_valid_comparison_gives_a_completed_task_whose_verdict_validates(
    conformant: LiveAgent, binding: str
) -> None:
    task = send(conformant, binding, data_message(VALID))["task"]

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    part = verdict_part(task)
    assert part["mediaType"] == part["metadata"]["mimeType"] == OUTPUT_MODE
    jsonschema.validate(part["data"], SCHEMAS[OUTPUT_SCHEMA])
    progress = task["status"]["message"]["metadata"][PROGRESS_EXTENSION]
    jsonschema.validate(progress, PROGRESS_SCHEMA)
    assert progress["trackers"][0]["status"] == "completed"


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_comparison_missing_a_required_member_is_rejected_saying_why(
    conformant: LiveAgent, binding: str
) -> None:
    task = send(conformant, binding, data_message(MISSING_B))["task"]

    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    assert "'b' is a required property" in task["status"]["message"]["parts"][0]["text"]
    assert "artifacts" not in task


def test_text_gives_a_completed_task_that_echoes_it(conformant: LiveAgent) -> None:
    task = send(conformant, "JSONRPC", text_message("Hello, agent"))["task"]

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert verdict_part(task) == {"text": "Hello, agent"}


def test_every_message_is_recorded_and_probes_are_not_messages(conformant: LiveAgent) -> None:
    probes(conformant)
    assert conformant.received == [] and conformant.sends == 0
    assert conformant.hits(method="POST", path="/a2a/jsonrpc") == 6

    send(conformant, "JSONRPC", data_message(VALID))
    send(conformant, "HTTP+JSON", text_message("hi"))

    assert [m["parts"][0].get("data") for m in conformant.received] == [VALID, None]
    assert conformant.sends == 2


# --- The probes: what the live checks send that cannot start work -------------------------


def probes(agent: LiveAgent) -> dict[str, tuple[int, Any]]:
    """Each probe's HTTP status and JSON-RPC error code (or REST ErrorInfo reason)."""
    unknown = str(uuid.uuid4())
    answers: dict[str, httpx.Response] = {
        "GetTask": rpc(agent, "GetTask", {"id": unknown}),
        "CancelTask": rpc(agent, "CancelTask", {"id": unknown}),
        "unknown method": rpc(agent, "NoSuchMethod", {}),
        "not JSON": httpx.post(agent.jsonrpc_url, content=b"{not json", headers=V1),
        "version 9.9": rpc(agent, "GetTask", {"id": unknown}, {"A2A-Version": "9.9"}),
        "no version": rpc(agent, "GetTask", {"id": unknown}, {}),
        "REST get": httpx.get(f"{agent.rest_url}/tasks/{unknown}", headers=V1),
        "REST cancel": httpx.post(f"{agent.rest_url}/tasks/{unknown}:cancel", headers=V1),
        "REST not JSON": httpx.post(agent.rest_url + "/message:send", content=b"{", headers=V1),
        "REST version 9.9": httpx.get(
            f"{agent.rest_url}/tasks/{unknown}", headers={"A2A-Version": "9.9"}
        ),
    }
    seen: dict[str, tuple[int, Any]] = {}
    for probe, response in answers.items():
        body = response.json()
        if probe.startswith("REST"):
            seen[probe] = (response.status_code, body["error"]["details"][0]["reason"])
        else:
            assert body["jsonrpc"] == "2.0"
            seen[probe] = (response.status_code, body["error"]["code"])
    return seen


SPEC_ANSWERS = {
    "GetTask": (200, -32001),
    "CancelTask": (200, -32001),
    "unknown method": (200, -32601),
    "not JSON": (200, -32700),
    "version 9.9": (200, -32009),
    # Spec 3.6: no header means 0.3, which a v1.0-only interface does not serve.
    "no version": (200, -32009),
    "REST get": (404, "TASK_NOT_FOUND"),
    "REST cancel": (404, "TASK_NOT_FOUND"),
    "REST not JSON": (400, "INVALID_REQUEST"),
    "REST version 9.9": (400, "VERSION_NOT_SUPPORTED"),
}


@pytest.mark.parametrize(
    "start",
    [
        sdk_agent,
        handmade_agent,
        # The agents breaking a rule about messages answer the probes as the good ones do.
        lambda: broken_agent("message_instead_of_task"),
        lambda: broken_agent("bad_output"),
        lambda: broken_agent("accepts_invalid"),
    ],
    ids=["sdk", "handmade", "message_instead_of_task", "bad_output", "accepts_invalid"],
)
def test_the_probes_are_answered_as_the_spec_maps_them(start: Starter) -> None:
    with start() as agent:
        assert probes(agent) == SPEC_ANSWERS


# --- v0.3 through the SDK's compatibility layer -------------------------------------------


def v03_data_message(data: Any) -> dict[str, Any]:
    part = {"kind": "data", "data": data, "metadata": {"mimeType": INPUT_MODE}}
    return {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user", "parts": [part]}


def test_the_v03_sdk_agent_speaks_v03_json_rpc() -> None:
    with sdk_agent(version="0.3") as agent:
        unknown = str(uuid.uuid4())
        get = rpc(agent, "tasks/get", {"id": unknown}, {}).json()
        valid = rpc(agent, "message/send", {"message": v03_data_message(VALID)}, {}).json()
        invalid = rpc(agent, "message/send", {"message": v03_data_message(MISSING_B)}, {}).json()
        newer = rpc(agent, "tasks/get", {"id": unknown}, V1).json()

    assert get["error"]["code"] == -32001
    task = valid["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    part = task["artifacts"][0]["parts"][0]
    assert part["kind"] == "data" and part["metadata"]["mimeType"] == OUTPUT_MODE
    jsonschema.validate(part["data"], SCHEMAS[OUTPUT_SCHEMA])
    assert invalid["result"]["status"]["state"] == "rejected"
    # v0.3 has no VersionNotSupportedError: the SDK's v0.3 layer says "internal error".
    assert newer["error"]["code"] == -32603
    assert len(agent.received) == 2


def test_the_v03_sdk_agent_speaks_v03_rest() -> None:
    # v0.3 REST bodies are the ProtoJSON of v0.3's protobuf: ``content``, DataPart wrapped.
    part = {"data": {"data": VALID}, "metadata": {"mimeType": INPUT_MODE}}
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "content": [part]}
    with sdk_agent(version="0.3") as agent:
        sent = httpx.post(agent.rest_url + "/v1/message:send", json={"message": message})
        unknown = httpx.get(f"{agent.rest_url}/v1/tasks/{uuid.uuid4()}")

    task = sent.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    [verdict] = task["artifacts"][0]["parts"]
    assert verdict["metadata"]["mimeType"] == OUTPUT_MODE
    jsonschema.validate(verdict["data"]["data"], SCHEMAS[OUTPUT_SCHEMA])
    assert unknown.status_code == 404
    assert unknown.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


# --- The broken agents, each on its rule --------------------------------------------------


def test_every_broken_kind_starts_and_serves_the_same_card_structure() -> None:
    for kind in BROKEN_KINDS:
        with broken_agent(kind) as agent:
            card = httpx.get(agent.card_url).json()
        assert card["skills"][0]["inputModes"] == [INPUT_MODE], kind
        assert set(card["schemas"]) == set(SCHEMAS), kind


def test_message_instead_of_task_answers_a_message() -> None:
    with broken_agent("message_instead_of_task") as agent:
        answer = send(agent, "JSONRPC", data_message(VALID))

    assert set(answer) == {"message"} and answer["message"]["role"] == "ROLE_AGENT"


def test_bad_output_completes_with_a_verdict_that_breaks_its_schema() -> None:
    with broken_agent("bad_output") as agent:
        task = send(agent, "HTTP+JSON", data_message(VALID))["task"]

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    part = verdict_part(task)
    assert part["mediaType"] == OUTPUT_MODE
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(part["data"], SCHEMAS[OUTPUT_SCHEMA])


def test_accepts_invalid_completes_a_payload_missing_a_required_member() -> None:
    with broken_agent("accepts_invalid") as agent:
        task = send(agent, "JSONRPC", data_message(MISSING_B))["task"]

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_wrong_error_code_answers_an_unknown_task_with_an_internal_error_or_a_result() -> None:
    unknown = str(uuid.uuid4())
    with broken_agent("wrong_error_code") as agent:
        code = rpc(agent, "GetTask", {"id": unknown}).json()["error"]["code"]
        rest = httpx.get(f"{agent.rest_url}/tasks/{unknown}", headers=V1)
    with broken_agent("wrong_error_code", answer="result") as agent:
        result = rpc(agent, "GetTask", {"id": unknown}).json()["result"]

    assert code == -32603 and rest.status_code == 500
    assert result["id"] == unknown


def test_html_endpoint_answers_every_post_with_an_html_page() -> None:
    with broken_agent("html_endpoint") as agent:
        answers = [
            httpx.post(agent.jsonrpc_url, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"}),
            httpx.post(agent.rest_url + "/message:send", content=b"{"),
            httpx.post(agent.base_url + "/anything"),
        ]
        card = httpx.get(agent.card_url)

    for response in answers:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
    assert card.json()["name"]


def test_slow_outlasts_a_timeout_without_holding_up_other_requests() -> None:
    finished: dict[str, float] = {}
    with broken_agent("slow", delay=2.0) as agent:

        def slow_call() -> None:
            rpc(agent, "GetTask", {"id": "x"})
            finished["slow call"] = time.monotonic()

        caller = threading.Thread(target=slow_call)
        caller.start()
        time.sleep(0.2)
        card = httpx.get(agent.card_url)
        finished["card"] = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(agent.jsonrpc_url, json={}, headers=V1, timeout=0.5)
        caller.join()

    assert card.status_code == 200
    assert finished["card"] < finished["slow call"]


@pytest.mark.parametrize("chunked", [False, True])
def test_huge_answers_a_body_of_megabytes(chunked: bool) -> None:
    with broken_agent("huge", chunked=chunked) as agent:
        response = rpc(agent, "GetTask", {"id": "x"})

    assert len(response.content) == 8 * 1024 * 1024
    assert ("content-length" in response.headers) is not chunked
    assert response.json()["jsonrpc"] == "2.0"


def test_no_version_check_serves_any_version() -> None:
    unknown = str(uuid.uuid4())
    with broken_agent("no_version_check") as agent:
        codes = [
            rpc(agent, "GetTask", {"id": unknown}, headers).json()["error"]["code"]
            for headers in ({"A2A-Version": "9.9"}, {})
        ]
        rest = httpx.get(f"{agent.rest_url}/tasks/{unknown}", headers={"A2A-Version": "9.9"})

    assert codes == [-32001, -32001] and rest.status_code == 404


def test_bad_error_shape_leaves_out_code_or_jsonrpc() -> None:
    unknown = str(uuid.uuid4())
    with broken_agent("bad_error_shape") as agent:
        without_code = rpc(agent, "GetTask", {"id": unknown}).json()
        rest = httpx.get(f"{agent.rest_url}/tasks/{unknown}", headers=V1)
    with broken_agent("bad_error_shape", missing="jsonrpc") as agent:
        without_jsonrpc = rpc(agent, "GetTask", {"id": unknown}).json()

    assert without_code["jsonrpc"] == "2.0" and "code" not in without_code["error"]
    assert rest.status_code == 404 and "code" not in rest.json()["error"]
    assert "jsonrpc" not in without_jsonrpc and without_jsonrpc["error"]["code"] == -32001


def test_refused_interface_declares_its_interfaces_where_a_trap_counts_requests() -> None:
    with broken_agent("refused_interface") as agent:
        card = httpx.get(agent.card_url).json()
        urls = [interface["url"] for interface in card["supportedInterfaces"]]
        assert agent.trap is not None and len(agent.trap) == 0
        # The trap is a working agent: whatever reaches it is counted and answered.
        leaked = httpx.post(urls[0], json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})

    assert agent.card_url.startswith("http://127.0.0.1:")
    assert all(url.startswith("http://127.0.0.2:") for url in urls)
    assert leaked.json()["error"]["code"] == -32009
    assert agent.trap.count(method="POST", path="/a2a/jsonrpc") == 1
    assert agent.hits(path="/a2a/jsonrpc") == 0


def test_refused_interface_can_point_at_any_origin() -> None:
    with broken_agent("refused_interface", interface_origin="http://10.0.0.1:9") as agent:
        card = httpx.get(agent.card_url).json()

    assert card["supportedInterfaces"][0]["url"] == "http://10.0.0.1:9/a2a/jsonrpc"
    assert agent.trap is None


def test_auth_required_declares_a_bearer_scheme_and_answers_401_without_it() -> None:
    with broken_agent("auth_required", token="s3cret") as agent:
        card = httpx.get(agent.card_url).json()
        anonymous = rpc(agent, "GetTask", {"id": "x"})
        wrong = rpc(agent, "GetTask", {"id": "x"}, {**V1, "Authorization": "Bearer nope"})
        allowed = rpc(agent, "GetTask", {"id": "x"}, {**V1, "Authorization": "Bearer s3cret"})

    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert allowed.json()["error"]["code"] == -32001


def test_a_send_is_counted_even_where_the_agent_never_reads_it() -> None:
    with broken_agent("auth_required") as agent:
        rpc(agent, "SendMessage", {"message": text_message("hi")})
        httpx.post(agent.rest_url + "/message:send", json={"message": text_message("hi")})

    assert agent.received == [] and agent.sends == 2

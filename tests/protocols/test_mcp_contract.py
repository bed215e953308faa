"""One contract across the doors (issue 20, issue 17 items 14 and 16), over a live /mcp with the
official mcp client: the same mistake gets the REST API's message and the same limits; bad
bodies and hosts get JSON-RPC error objects, never a 500; the SDK writes no line per call."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from tests.support import mcp_call, mcp_session

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _rest_detail(base: str, query: str) -> str:
    response = httpx.get(f"{base}/api/v1/agents?{query}")
    assert response.status_code == 400
    return str(response.json()["detail"])


def test_argument_mistakes_get_the_api_messages_not_pydantic(live_registry: str) -> None:
    limit = mcp_call(live_registry, "search_agents", {"limit": 1000})
    assert limit.isError
    assert limit.content[0].text == _rest_detail(live_registry, "limit=1000")
    both = mcp_call(live_registry, "search_agents", {"limit": 0, "text": "x" * 1001})
    text = both.content[0].text
    assert both.isError and "validation error" not in text and "Arguments" not in text
    assert "limit must be an integer from 1 to 100" in text
    assert "text is longer than 1000 characters" in text
    health = mcp_call(live_registry, "search_agents", {"health": ["sickly"]})
    assert health.isError and health.content[0].text.startswith("health must be one of healthy")
    verified = mcp_call(live_registry, "search_agents", {"verified": "perhaps"})
    assert verified.content[0].text == "verified must be true or false"
    missing = mcp_call(live_registry, "get_agent", {})
    assert missing.isError and missing.content[0].text == "id is required"


def test_the_text_limit_is_the_apis_1000_characters(live_registry: str) -> None:
    rest = _rest_detail(live_registry, "q=" + "x" * 1001)
    assert rest == "q is longer than 1000 characters"
    assert not mcp_call(live_registry, "search_agents", {"text": "fight " * 166}).isError
    over = mcp_call(live_registry, "search_agents", {"text": "x" * 1001})
    assert over.isError and over.content[0].text == "text is longer than 1000 characters"
    tools = mcp_session(live_registry, lambda s: s.list_tools()).tools
    search = next(t for t in tools if t.name == "search_agents")
    assert search.inputSchema["properties"]["text"]["maxLength"] == 1000


def test_unknown_arguments_are_refused_naming_them(live_registry: str) -> None:
    rest = httpx.get(f"{live_registry}/api/v1/agents?colour=red")
    assert rest.status_code == 400 and "colour" in rest.json()["detail"]
    result = mcp_call(live_registry, "search_agents", {"text": "fight", "colour": "red", "zz": 1})
    assert result.isError
    assert result.content[0].text.startswith("Unknown argument: colour, zz. Known: ")
    assert "limit" in result.content[0].text
    accepting = mcp_call(live_registry, "find_agents_accepting", {"payload": {}, "limits": 3})
    assert accepting.isError and accepting.content[0].text.startswith("Unknown argument: limits.")


def test_a_string_payload_is_an_error_not_zero_agents(live_registry: str, fight_agent: Any) -> None:
    for payload in ('{"a": "x", "b": "y"}', "Lion"):
        result = mcp_call(live_registry, "find_agents_accepting", {"payload": payload})
        assert result.isError and result.structuredContent is None
        assert result.content[0].text.startswith("payload must be a JSON object, array")
    found = mcp_call(live_registry, "find_agents_accepting", {"payload": {"a": "x", "b": "y"}})
    assert [a["id"] for a in found.structuredContent["agents"]] == [str(fight_agent.pk)]
    tools = mcp_session(live_registry, lambda s: s.list_tools()).tools
    schema = next(t for t in tools if t.name == "find_agents_accepting").inputSchema
    assert "string" not in schema["properties"]["payload"]["type"]


def test_a_missing_resource_is_one_mcp_error_with_the_apis_message(live_registry: str) -> None:
    async def body(session: ClientSession) -> Any:
        errors = []
        for uri in (
            "agent://00000000-0000-0000-0000-000000000000/card",
            "agent://not-a-uuid/card",
            "nothing://here",
        ):
            with pytest.raises(McpError) as caught:
                await session.read_resource(uri)  # type: ignore[arg-type]
            errors.append(caught.value.error)
        return errors

    missing, bad, unknown = mcp_session(live_registry, body)
    assert missing.message == "No agent with this id." and missing.code == -32002
    assert bad.message == "No agent with this id."
    assert "Error creating resource" not in missing.message
    assert unknown.code == -32002 and unknown.message == "Unknown resource: nothing://here"


def test_the_sdk_logs_nothing_permcp_call(
    live_registry: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        mcp_call(live_registry, "list_schemas", {})
        mcp_call(live_registry, "no_such_tool", {})
    noise = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("mcp")
        and ("Processing request" in r.getMessage() or "Terminating session" in r.getMessage()
             or "not listed" in r.getMessage())
    ]  # fmt: skip
    assert noise == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"[" * 100_000, -32600),
        (b"{" * 100_000, -32700),
        (b"[" * 100, -32700),
        (b"\xff\xfe{}", -32700),
    ],
    ids=["100k-brackets", "100k-braces", "unclosed", "not-utf8"],
)
def test_unparseable_bodies_are_json_rpc_errors_not_500(
    live_registry: str, body: bytes, code: int
) -> None:
    response = httpx.post(live_registry + "/mcp", content=body, headers=HEADERS)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code and "Traceback" not in error["message"]


def test_nul_characters_get_the_apis_message_not_a_database_error(live_registry: str) -> None:
    assert "NUL character" in _rest_detail(live_registry, "tag=a%00b")
    tag = mcp_call(live_registry, "search_agents", {"tag": ["a\x00b"]})
    assert tag.isError and tag.content[0].text == "tag contains a NUL character"
    for tool, arguments, name in [
        ("search_agents", {"text": "fight\x00"}, "text"),
        ("get_agent", {"id": "urn:air:\x00"}, "id"),
        ("list_schemas", {"prefix": "\x00"}, "prefix"),
    ]:
        result = mcp_call(live_registry, tool, arguments)
        assert result.isError and result.content[0].text == f"{name} contains a NUL character"
    # A member name PostgreSQL cannot store is no error of the caller's: no closed schema can
    # accept it, open ones may (schemas_app/matching.py).
    key = mcp_call(live_registry, "find_agents_accepting", {"payload": {"a\x00": 1}})
    assert not key.isError and key.structuredContent is not None
    assert "database" not in key.content[0].text


@pytest.mark.parametrize(
    "body",
    [b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b'"x"', b"null", b"NaN",
     b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}'],
    ids=["batch", "string", "null", "nan", "object-id"],
)  # fmt: skip
def test_a_body_that_is_not_one_request_object_is_invalid_request(
    live_registry: str, body: bytes
) -> None:
    response = httpx.post(live_registry + "/mcp", content=body, headers=HEADERS)
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": -32600, "message": "Invalid Request: a JSON-RPC 2.0 object is expected"
    }  # fmt: skip


def test_a_lone_surrogate_is_invalid_params(live_registry: str) -> None:
    call = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_agents",'
        ' "arguments": {"text": "fight \\ud800"}}}'
    )
    response = httpx.post(live_registry + "/mcp", content=call.encode(), headers=HEADERS)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32602
    assert error["message"] == (
        "Invalid params: /params/arguments/text contains an unpaired surrogate escape"
    )


def test_mcp_obeys_allowed_hosts(live_registry: str) -> None:
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    evil = httpx.post(
        live_registry + "/mcp", content=ping, headers={**HEADERS, "Host": "evil.example"}
    )
    assert evil.status_code == 400
    assert evil.json()["error"]["code"] == -32600
    # The same host check as Django's views.
    site = httpx.get(live_registry + "/api/v1/agents", headers={"Host": "evil.example"})
    assert site.status_code == 400
    assert httpx.post(live_registry + "/mcp", content=ping, headers=HEADERS).status_code == 200

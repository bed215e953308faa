"""``/mcp`` does not pass through Django's middleware, yet its requests get a request id as
Django's views do (issue 38): the client's safe ``X-Request-ID`` or a new one, returned in the
answer (errors included) and set while the tool runs, so every line it logs carries it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from protocols import queries
from registry.logs import context

HEADERS = {"accept": "application/json, text/event-stream"}
GENERATED = re.compile(r"[0-9a-f]{16}")


def _get_agent(base: str, ident: str, **headers: str) -> httpx.Response:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_agent", "arguments": {"id": ident}},
    }
    return httpx.post(f"{base}/mcp", json=call, headers={**HEADERS, **headers}, timeout=30)


def test_a_tool_call_keeps_the_clients_id_returns_it_and_runs_under_it(
    live_registry: str, fight_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []
    original = queries.get_agent

    def spying(**kwargs: Any) -> Any:
        seen.append(context.request_id.get())
        return original(**kwargs)

    monkeypatch.setattr(queries, "get_agent", spying)
    answer = _get_agent(live_registry, str(fight_agent.pk), **{"X-Request-ID": "trace.mcp-1"})
    assert answer.status_code == 200
    assert answer.headers["x-request-id"] == "trace.mcp-1"
    assert "Fight judge" in answer.text
    assert seen == ["trace.mcp-1"]


def test_each_call_without_a_safe_id_gets_its_own(live_registry: str, fight_agent: Any) -> None:
    first = _get_agent(live_registry, str(fight_agent.pk))
    second = _get_agent(live_registry, str(fight_agent.pk), **{"X-Request-ID": "two words"})
    ids = [first.headers["x-request-id"], second.headers["x-request-id"]]
    assert all(GENERATED.fullmatch(rid) for rid in ids) and ids[0] != ids[1]
    assert first.headers.get_list("x-request-id") == [ids[0]]  # one header, not two


def test_refusals_before_the_sdk_carry_the_id(live_registry: str, settings: Any) -> None:
    not_json = httpx.post(
        f"{live_registry}/mcp", content=b"{", headers={**HEADERS, "X-Request-ID": "bad-body"}
    )
    assert not_json.status_code == 400 and not_json.headers["x-request-id"] == "bad-body"
    assert not_json.json()["error"]["code"] == -32700
    settings.REGISTRY_ANON_RATE = "1/minute"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    answers = [
        httpx.post(f"{live_registry}/mcp", json=ping, headers={**HEADERS, "X-Request-ID": f"p{n}"})
        for n in range(3)
    ]
    refused = [a for a in answers if a.status_code == 429]
    assert refused and refused[-1].headers["x-request-id"] == "p2"

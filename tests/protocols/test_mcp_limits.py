"""/mcp is rate-limited per client like the REST API, with a JSON-RPC error object."""

from __future__ import annotations

from typing import Any

import httpx


def test_mcp_is_rate_limited_per_client(live_registry: str, settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "3/minute"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream"}
    answers = [httpx.post(f"{live_registry}/mcp", json=ping, headers=headers) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] != [429, 429, 429]
    last = answers[3]
    assert last.status_code == 429 and int(last.headers["retry-after"]) >= 1
    body = last.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32000
    # The REST API shares the budget: this client is over it there too.
    assert httpx.get(f"{live_registry}/api/v1/agents").status_code == 429

"""Every ASGI path recovers when the database drops its connections (issue 17 item 3).

The server's connections are ended from the database side with ``pg_terminate_backend`` (what a
PostgreSQL restart does to them; the machine's PostgreSQL itself is never restarted here: the
fault suite under tests/faults/ restarts a private one). The MCP tools run in a worker thread
outside Django's request signals: before the fix every call after that answered "the connection
is closed", for as long as the process lived.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.db import connection

from tests.support import mcp_call

pytestmark = pytest.mark.django_db(transaction=True)


def _terminate_server_connections() -> int:
    """End every other backend of the test database, and wait until they are gone."""
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(pg_terminate_backend(pid)) {others}")
        ended = int(cursor.fetchone()[0])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.05)
    return ended


def _a2a(base: str) -> httpx.Response:
    call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "1", "role": "user",
        "parts": [{"kind": "data", "data": {"filters": {"tag": ["fight"]}},
                   "metadata": {"mimeType": "application/json;schema=agentQuery"}}]}}}  # fmt: skip
    return httpx.post(base + "/a2a", content=json.dumps(call), timeout=20)


def test_mcp_a2a_ard_and_the_site_answer_right_after_the_connections_are_killed(
    live_registry: str, fight_agent: Any
) -> None:
    agent_id = str(fight_agent.pk)
    assert not mcp_call(live_registry, "get_agent", {"id": agent_id}).isError
    assert _a2a(live_registry).status_code == 200
    assert _terminate_server_connections() >= 1  # at least the MCP worker thread's
    for _ in range(3):
        result = mcp_call(live_registry, "get_agent", {"id": agent_id})
        assert not result.isError, result.content[0].text
        assert result.structuredContent["name"] == "Fight judge"
        found = mcp_call(live_registry, "search_agents", {"schema": "fightComparison"})
        assert [r["id"] for r in found.structuredContent["results"]] == [agent_id]
        answer = _a2a(live_registry)
        task = answer.json()["result"]
        assert task["artifacts"][0]["parts"][0]["data"]["agents"][0]["id"] == agent_id
        ard = httpx.post(live_registry + "/ard/search", json={"query": {"text": "fight"}})
        assert ard.status_code == 200
        assert httpx.get(live_registry + "/api/v1/agents?limit=1").status_code == 200
        assert httpx.get(live_registry + "/").status_code == 200
        _terminate_server_connections()


@pytest.fixture
def no_health_checks() -> Iterator[None]:
    """Connections opened from now on skip the `SELECT 1` before reuse."""
    settings_dict = connection.settings_dict  # shared by every thread's connection
    saved = settings_dict["CONN_HEALTH_CHECKS"]
    settings_dict["CONN_HEALTH_CHECKS"] = False
    try:
        yield
    finally:
        settings_dict["CONN_HEALTH_CHECKS"] = saved


def test_without_health_checks_one_call_fails_cleanly_and_the_next_recovers(
    live_registry: str, fight_agent: Any, no_health_checks: None
) -> None:
    agent_id = str(fight_agent.pk)
    _terminate_server_connections()
    assert not mcp_call(live_registry, "get_agent", {"id": agent_id}).isError  # a new connection
    _terminate_server_connections()
    failed = mcp_call(live_registry, "get_agent", {"id": agent_id})
    assert failed.isError
    assert failed.content[0].text == "The registry's database is unavailable; retry in a moment."
    recovered = mcp_call(live_registry, "get_agent", {"id": agent_id})
    assert not recovered.isError, recovered.content[0].text

"""A2A's task store is bounded and a Redis outage costs no 500 (issue 17 items 10 and 11).

Each test starts its own redis-server on a free port and points the caches (and the politeness
client) at it; the outage is a kill of that private server. The machine's Redis is never touched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis

from cards import politeness
from tests.factories import minimal_card
from tests.support import CardServer, free_port, mcp_call

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

QUERY_MODE = "application/json;schema=agentQuery"


@dataclass
class PrivateRedis:
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client().ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def private_redis(settings: Any) -> Iterator[PrivateRedis]:
    server = PrivateRedis(free_port())
    server.start()
    backend = "django.core.cache.backends.redis.RedisCache"
    settings.CACHES = {
        "default": {"BACKEND": backend, "LOCATION": server.url, "KEY_PREFIX": "registry"},
        "a2a": {"BACKEND": backend, "LOCATION": server.url, "KEY_PREFIX": "registry-a2a"},
    }
    settings.REDIS_URL = server.url
    settings.CELERY_TASK_ALWAYS_EAGER = False  # politeness is shared through Redis
    politeness._redis.cache_clear()
    try:
        yield server
    finally:
        server.kill()
        politeness._redis.cache_clear()


def _send(base: str, parts: list[dict[str, Any]], **message: Any) -> dict[str, Any]:
    sent = {"kind": "message", "messageId": "1", "role": "user", "parts": parts, **message}
    call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": sent}}
    response = httpx.post(base + "/a2a", content=json.dumps(call), timeout=30)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _get(base: str, task_id: str) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}}
    response = httpx.post(base + "/a2a", json=call, timeout=30)
    assert response.status_code == 200, response.text
    return dict(response.json())


QUERY = {
    "kind": "data",
    "data": {"filters": {"tag": ["fight"]}},
    "metadata": {"mimeType": QUERY_MODE},
}


def test_a_redis_outage_costs_no_500_and_a2a_comes_back(
    live_registry: str,
    private_redis: PrivateRedis,
    fight_agent: Any,
    card_server: CardServer,
    loopback_allowed: Any,
) -> None:
    card_url = card_server.serve("/card.json", json.dumps(minimal_card()).encode())
    before = _send(live_registry, [QUERY])["result"]
    assert _get(live_registry, before["id"])["result"]["id"] == before["id"]

    private_redis.kill()
    during = _send(live_registry, [QUERY])
    assert during["result"]["status"]["state"] == "completed"
    assert during["result"]["artifacts"][0]["parts"][0]["data"]["agents"][0]["name"] == (
        "Fight judge"
    )
    unavailable = _get(live_registry, before["id"])["error"]
    assert unavailable == {
        "code": -32603, "message": "The task store is unavailable; retry in a moment."
    }  # fmt: skip
    follow_up = _send(live_registry, [{"kind": "text", "text": "more"}], taskId=before["id"])
    assert follow_up["error"]["code"] == -32603
    validated = httpx.post(f"{live_registry}/api/v1/validate", json={"url": card_url}, timeout=30)
    assert validated.status_code == 200, validated.text
    assert httpx.get(f"{live_registry}/api/v1/agents?limit=1").status_code == 200

    assert not mcp_call(live_registry, "list_schemas", {}).isError

    private_redis.start()  # the same port: the clients reconnect on their own
    after = _send(live_registry, [QUERY])["result"]
    assert _get(live_registry, after["id"])["result"]["id"] == after["id"]


def _a2a_keys(server: PrivateRedis, kind: str) -> list[bytes]:
    return list(server.client().scan_iter(f"registry-a2a:*:a2a-{kind}:*", count=1000))


def test_anonymous_tasks_are_bounded_in_size_count_and_lifetime(
    live_registry: str, private_redis: PrivateRedis, fight_agent: Any, settings: Any
) -> None:
    client = private_redis.client()
    client.config_set("maxmemory-policy", "noeviction")
    blob = {"kind": "data", "data": {"blob": "x" * 240_000}}
    start = int(client.info("memory")["used_memory"])
    answered = []
    for _ in range(100):
        result = _send(live_registry, [QUERY, blob])["result"]
        assert result["status"]["state"] == "completed"
        answered.append(result["id"])
    grown = int(client.info("memory")["used_memory"]) - start
    print(f"Redis grew by {grown} bytes for 100 anonymous 240 KB message/send")
    # Before the bounds: each task kept its 240 KB message for an hour (27 MB per 100 calls).
    assert grown < 2_000_000, grown
    kept = _a2a_keys(private_redis, "task")
    assert 0 < len(kept) <= settings.REGISTRY_A2A_TASKS_PER_CLIENT
    assert all(0 < client.ttl(key) <= settings.REGISTRY_A2A_TASK_TTL for key in kept)
    # A big task is kept without its history; past the per-client count, not at all.
    assert _get(live_registry, answered[0])["result"]["history"] == []
    assert _get(live_registry, answered[-1])["error"]["code"] == -32001
    for key in kept:
        client.delete(key)
    client.delete(*client.keys("registry-a2a:*:a2a-count:*"))
    small = _send(live_registry, [QUERY])["result"]
    assert _get(live_registry, small["id"])["result"]["history"][0]["messageId"] == "1"


def test_all_clients_together_stay_inside_the_byte_budget(
    live_registry: str, private_redis: PrivateRedis, fight_agent: Any, settings: Any
) -> None:
    settings.REGISTRY_A2A_STORE_MAX_BYTES = 20_000
    answered = [_send(live_registry, [QUERY])["result"]["id"] for _ in range(30)]
    kept = [task for task in answered if "result" in _get(live_registry, task)]
    size = len(json.dumps(_get(live_registry, kept[0])["result"]))
    assert 0 < len(kept) < 30
    assert len(kept) * size <= 20_000 + size
    assert [task for task in answered if "error" in _get(live_registry, task)]

"""One correct call on each door of a live registry: the v1 API, /mcp, /a2a, /ard/search, a page.

Each returns None when the door answered correctly, or a short description of what it answered.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

Door = Callable[[str, str], "str | None"]


def _http(
    call: Callable[[], httpx.Response], check: Callable[[httpx.Response], bool]
) -> str | None:
    try:
        response = call()
    except httpx.HTTPError as exc:
        return f"{exc.__class__.__name__}: {exc}"
    if response.status_code == 200 and check(response):
        return None
    return f"{response.status_code}: {response.text[:300]}"


def api(base: str, agent_id: str) -> str | None:
    return _http(
        lambda: httpx.get(f"{base}/api/v1/agents/{agent_id}", timeout=5),
        lambda response: response.json()["id"] == agent_id,
    )


def ard_search(base: str, agent_id: str) -> str | None:
    return _http(
        lambda: httpx.post(
            f"{base}/ard/search", json={"query": {"text": "weather forecast"}}, timeout=5
        ),
        lambda response: bool(response.json().get("results")),
    )


def site(base: str, agent_id: str) -> str | None:
    return _http(
        lambda: httpx.get(f"{base}/", params={"q": "weather"}, timeout=5),
        lambda response: "Weatherly" in response.text,
    )


def a2a(base: str, agent_id: str) -> str | None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": "m1", "role": "user",
        "parts": [{"kind": "text", "text": "weather forecast"}],
    }}}  # fmt: skip

    def completed(response: httpx.Response) -> bool:
        task = response.json().get("result") or {}
        if task.get("status", {}).get("state") != "completed":
            return False
        found = task["artifacts"][0]["parts"][0]["data"]["agents"]
        return agent_id in [agent["id"] for agent in found]

    return _http(lambda: httpx.post(f"{base}/a2a", json=call, timeout=5), completed)


def mcp(base: str, agent_id: str) -> str | None:
    async def run() -> str | None:
        async with streamablehttp_client(base + "/mcp", timeout=5) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("search_agents", {"text": "weather forecast"})
                got = await session.call_tool("get_agent", {"id": agent_id})
        for result in (found, got):
            if result.isError:
                return f"isError: {json.dumps([c.model_dump() for c in result.content])[:300]}"
        structured: Any = got.structuredContent or {}
        return None if structured.get("id") == agent_id else f"get_agent: {structured}"

    try:
        return asyncio.run(asyncio.wait_for(run(), timeout=15))
    except Exception as exc:  # the client raises many types (and groups) on a broken server
        return f"{exc.__class__.__name__}: {exc}"


DOORS: dict[str, Door] = {"api": api, "mcp": mcp, "a2a": a2a, "ard": ard_search, "site": site}


def failing(base: str, agent_id: str, skip: Collection[str] = ()) -> dict[str, str]:
    """Every door (but ``skip``) that does not answer correctly now, with what it answered."""
    answers = {name: door(base, agent_id) for name, door in DOORS.items() if name not in skip}
    return {name: answer for name, answer in answers.items() if answer is not None}

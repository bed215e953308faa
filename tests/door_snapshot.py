"""Every door's answers on the corpus, as a digest to compare across a refactor (issue 48).

Not collected by ``make test`` (the name has no ``test_`` prefix): ``scripts/door_snapshot.py``
runs it with ``DOOR_SNAPSHOT_OUT`` naming the file to write, once on each commit, then compares
the two files. Every real card of ``../shared/corpus`` is ingested (the three that are not JSON
too), the ASGI application is served by uvicorn, and each door is asked the same questions: the
REST lists, filters, facets, lexical and semantic searches, each agent's detail, card, skills,
interfaces, schemas and badge, ARD search, explore and agents, every MCP tool through the official
client, A2A agent queries, and the catalogue's pages. What differs between two runs of the same
code (agent ids, times, CSRF tokens, nonces, the request id) is replaced by stable names before
each body is digested, so two runs of one commit give the same file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import CORPUS, mcp_session, serving_asgi

pytestmark = pytest.mark.django_db

QUERIES = [
    "weather forecast",
    "currency exchange rates",
    "translate text",
    "book a flight",
    "summarise a document",
    "image generation",
    "code review",
    "recipes",
]
TIME = re.compile(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d| UTC)?"
    r"|\b\d{1,2} [A-Z][a-z]{2} \d{4}\b|\b\d+ (?:second|minute|hour)s? ago"
)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
VOLATILE = [
    (re.compile(r'(csrfmiddlewaretoken" value=")[^"]+'), r"\1<csrf>"),
    (re.compile(r'(nonce=")[^"]+'), r"\1<nonce>"),
    (re.compile(r"(nonce-)[A-Za-z0-9+/=_-]+"), r"\1<nonce>"),
    (re.compile(r'("(?:request_?[iI]d|requestId)": ?")[^"]+'), r"\1<request-id>"),
    (re.compile(r"(cursor=)[A-Za-z0-9_%=-]+"), r"\1<cursor>"),
    (re.compile(r'("(?:cursor|next_?[cC]ursor|nextPageToken)": ?")[^"]+'), r"\1<cursor>"),
    (re.compile(r'("(?:protected|signature)": ?")[^"]+'), r"\1<jws>"),
    (re.compile(r'("(?:process|fetch)_?[mM]s": ?)[0-9.]+'), r"\1<ms>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "<registry>"),
    (re.compile(r'("(?:exp|iat|nbf)": ?)\d+'), r"\1<epoch>"),
    (re.compile(r"ey[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), "<jwt>"),
]


def _normalise(text: str, names: dict[str, str]) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    text = TIME.sub("<time>", text)
    return UUID.sub(lambda m: names.setdefault(m.group(0), f"<id{len(names)}>"), text)


@pytest.fixture(scope="module")
def registry(django_db_setup: None, django_db_blocker: Any) -> Iterator[tuple[str, list[str]]]:
    from django.core.cache import cache
    from django.core.management import call_command

    # Through tests.factories, which follows card_ingest wherever a refactor moves it.
    from tests.factories import Agent, FetchResult, card_ingest

    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: the corpus is only on the project's machines")
    with django_db_blocker.unblock():
        cache.clear()
        agents = []
        for n, path in enumerate(sorted(CORPUS.glob("*.json")), start=1):
            # Ids fixed by the file's place: ties in a ranking fall back to the id, so random
            # ids would order equal cards (the corpus has copies) differently on each run.
            url = f"https://{path.stem}.corpus.example/.well-known/agent-card.json"
            agent = Agent.objects.create(pk=uuid.UUID(int=n), url=url, card_url=url)
            card_ingest(agent_id=agent.pk, result=FetchResult.local(url, path.read_bytes()))
            agents.append(str(agent.pk))
        try:
            with serving_asgi(log_level="critical") as base:
                yield base, agents
        finally:
            call_command("flush", interactive=False, verbosity=0)
            cache.clear()


def _gets(agents: list[str]) -> list[str]:
    paths = [
        "/api/v1/agents?limit=100",
        "/api/v1/agents?limit=5",
        "/api/v1/agents?valid=true&limit=100",
        "/api/v1/agents?signed=true",
        "/api/v1/skills?limit=100",
        "/api/v1/tags",
        "/api/v1/modes",
        "/api/v1/extensions",
        "/api/v1/schemas",
        "/ard/agents",
        "/ard/",
        "/",
        "/.well-known/agent-card.json",
        "/.well-known/ard.json",
        "/.well-known/ai-catalog.json",
        "/robots.txt",
        "/nope",
    ]
    for query in QUERIES:
        paths += [
            f"/api/v1/agents?q={query}",
            f"/api/v1/agents?q={query}&mode=semantic",
            f"/api/v1/agents?q={query}&explain=true",
            f"/?q={query}",
        ]
    for tag in ("weather", "travel", "finance", "search"):
        paths.append(f"/api/v1/agents?tag={tag}")
    for mode in ("text/plain", "application/json", "image/png"):
        paths.append(f"/api/v1/agents?input_mode={mode}")
    for pk in agents:
        paths += [
            f"/api/v1/agents/{pk}",
            f"/api/v1/agents/{pk}/card",
            f"/api/v1/agents/{pk}/skills",
            f"/api/v1/agents/{pk}/interfaces",
            f"/api/v1/agents/{pk}/schemas",
            f"/api/v1/agents/{pk}/history",
            f"/api/v1/agents/{pk}/live-checks",
            f"/agents/{pk}",
            f"/agents/{pk}/try",
            f"/badges/{pk}.svg",
        ]
    return paths


def _posts() -> list[tuple[str, Any]]:
    posts: list[tuple[str, Any]] = []
    for query in QUERIES:
        posts.append(("/ard/search", {"query": {"text": query}}))
        facets = [{"field": f} for f in ("tags", "inputModes", "schema", "signature", "publisher")]
        posts.append(("/ard/explore", {"query": {"text": query}, "resultType": {"facets": facets}}))
        posts.append(
            (
                "/a2a",
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": "m1",
                            "role": "ROLE_USER",
                            "parts": [{"text": f"find an agent for {query}"}],
                        }
                    },
                },
            )
        )
    return posts


def _mcp(base: str, agents: list[str]) -> list[tuple[str, str]]:
    async def body(session: Any) -> list[tuple[str, str]]:
        out = []
        tools = await session.list_tools()
        out.append(("tools/list", tools.model_dump_json()))
        for query in QUERIES:
            result = await session.call_tool("search_agents", {"query": query})
            out.append((f"search_agents {query}", result.model_dump_json()))
        for pk in agents[:20]:
            result = await session.call_tool("get_agent", {"agent_id": pk})
            out.append((f"get_agent {pk}", result.model_dump_json()))
        result = await session.call_tool("list_schemas", {})
        out.append(("list_schemas", result.model_dump_json()))
        for mode in ("text/plain", "application/json"):
            result = await session.call_tool("find_agents_accepting", {"media_type": mode})
            out.append((f"find_agents_accepting {mode}", result.model_dump_json()))
        return out

    return list(mcp_session(base, body))


def test_door_snapshot(registry: tuple[str, list[str]]) -> None:
    target = os.environ.get("DOOR_SNAPSHOT_OUT")
    if not target:
        pytest.skip("DOOR_SNAPSHOT_OUT is not set: scripts/door_snapshot.py runs this")
    base, agents = registry
    names = {pk: f"<agent{n}>" for n, pk in enumerate(agents)}
    digest: dict[str, dict[str, Any]] = {}

    def record(door: str, status: int, kind: str, body: str) -> None:
        door = _normalise(door, names)
        text = _normalise(body, names)
        digest[door] = {
            "status": status,
            "type": kind,
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "head": text[:200],
            "body": text,
        }

    with httpx.Client(base_url=base, timeout=60) as http:
        for path in _gets(agents):
            answer = http.get(path, headers={"accept": "*/*"})
            record(f"GET {path}", answer.status_code, answer.headers.get("content-type", ""),
                   answer.text)  # fmt: skip
        for path, payload in _posts():
            answer = http.post(path, json=payload)
            label = f"POST {path} {json.dumps(payload, sort_keys=True)}"
            record(label, answer.status_code, answer.headers.get("content-type", ""), answer.text)
    for door, text in _mcp(base, agents):
        record(f"MCP {door}", 200, "mcp", text)
    Path(target).write_text(json.dumps(digest, indent=1, sort_keys=True))
    assert len(digest) > 800

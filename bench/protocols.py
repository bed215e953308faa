"""What MCP tool calls and A2A message/send add over the query they run, and what serving the
site under ASGI costs a plain Django view.

Usage (loopback only; demo agents are loaded into the database given):

    python bench/protocols.py --database-url postgres://postgres@127.0.0.1:5432/registry_bench_protocols

For each query it reports medians over ``--requests`` sequential requests: the function called
in-process, the REST API over HTTP, the MCP tool over HTTP and A2A message/send over HTTP. Then a
simple GET (/healthz, /api/v1/agents?limit=20) under gunicorn sync (WSGI) and gunicorn with
uvicorn workers (ASGI, what compose runs).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import ROOT, bench_env, ensure_database, median, setup_django  # noqa: E402

PAYLOAD = {"a": "Lion", "b": "Tiger"}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server(database_url: str, worker_class: str, app: str, pool: str = "false") -> Iterator[str]:
    port = _port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "-k", worker_class, "--workers", "1",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=bench_env(database_url, REGISTRY_DB_POOL=pool, REGISTRY_ANON_RATE="off"),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(10)


def timed(fn: Callable[[], Any], n: int) -> float:
    for _ in range(min(20, n)):
        fn()  # warm-up
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return median(samples)


def mcp_call(http: httpx.Client, base: str, tool: str, arguments: dict[str, Any]) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    response = http.post(base + "/mcp", json=call, headers={
        "Accept": "application/json, text/event-stream"})  # fmt: skip
    body = response.json()
    if "error" in body or body["result"].get("isError"):
        raise SystemExit(f"MCP {tool} failed: {body}")


def a2a_send(http: httpx.Client, base: str, query: dict[str, Any]) -> None:
    part = {"data": query, "metadata": {"mimeType": "application/json;schema=agentQuery"}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "b", "role": "ROLE_USER",
                                   "parts": [part]}}}  # fmt: skip
    body = http.post(base + "/a2a", json=call).json()
    if "error" in body:
        raise SystemExit(f"A2A failed: {body}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_bench_protocols"
    )
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument(
        "--pool", default="true", help="REGISTRY_DB_POOL for the ASGI servers (true/false)"
    )
    args = parser.parse_args()
    ensure_database(args.database_url)
    setup_django(args.database_url)
    from django.core.management import call_command

    from cards.reads.gate import ANONYMOUS
    from protocols import agent_query, queries

    call_command("migrate", verbosity=0)
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    request = queries.base_request("http://127.0.0.1")
    n = args.requests
    rows: list[tuple[Any, ...]] = []
    asgi = ("uvicorn_worker.UvicornWorker", "registry.asgi:application")
    with server(args.database_url, *asgi, pool=args.pool) as base:
        http = httpx.Client(timeout=10)
        text_query = {"text": "weather", "limit": 20}
        payload_query = {"payload": PAYLOAD, "limit": 20}
        cases = [
            ("search text", lambda: queries.search_agents(
                text="weather", filters={}, limit=20, viewer=ANONYMOUS, request=request),
             lambda: http.get(base + "/api/v1/agents", params={"q": "weather", "limit": 20}),
             lambda: mcp_call(http, base, "search_agents", {"text": "weather"}),
             lambda: agent_query.answer(text_query, viewer=ANONYMOUS, request=request),
             lambda: a2a_send(http, base, text_query)),
            ("payload match", lambda: queries.find_accepting(
                payload=PAYLOAD, limit=20, viewer=ANONYMOUS),
             lambda: http.post(base + "/api/v1/schemas/match", json={"payload": PAYLOAD}),
             lambda: mcp_call(http, base, "find_agents_accepting", {"payload": PAYLOAD}),
             lambda: agent_query.answer(payload_query, viewer=ANONYMOUS, request=request),
             lambda: a2a_send(http, base, payload_query)),
        ]  # fmt: skip
        for name, *calls in cases:
            rows.append((name, *(timed(call, n) for call in calls)))
    print(f"N={n} sequential requests, medians in ms")
    print(
        "query | tool query in-process | REST HTTP | MCP tool HTTP | MCP added "
        "| agentQuery in-process | A2A SendMessage HTTP | A2A added"
    )
    for name, direct, rest, mcp, answer, a2a in rows:
        values = (direct, rest, mcp, mcp - direct, answer, a2a, a2a - answer)
        print(name + " | " + " | ".join(f"{v:.2f}" for v in values))
    print("\nplain views, 1 worker: gunicorn sync (WSGI) | uvicorn worker (ASGI) without and with")
    print("the connection pool (REGISTRY_DB_POOL)")
    for path in ("/healthz", "/api/v1/agents?limit=20"):
        results = []
        for worker, app, pool in (("sync", "registry.wsgi:application", "false"),
                                  (*asgi, "false"), (*asgi, "true")):  # fmt: skip
            with server(args.database_url, worker, app, pool=pool) as base:
                http = httpx.Client(timeout=10)
                results.append(timed(lambda: http.get(base + path), n))  # noqa: B023
        print(
            f"{path} | WSGI {results[0]:.2f} | ASGI {results[1]:.2f} "
            f"| ASGI+pool {results[2]:.2f} | ratio {results[2] / results[0]:.2f}"
        )
    print(json.dumps({"requests": n}))


if __name__ == "__main__":
    main()

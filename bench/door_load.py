"""Requests per web core for each door: MCP tools, A2A SendMessage, the catalogue's pages, badges
and attestations, beside the REST fetch by id that the other serving figures use.

The server is the Dockerfile's (granian, ``registry/rsgi.py``, ``--workers 2``), and for the
doors named "ASGI: " compose's protocols service (gunicorn with 2 uvicorn workers on
``registry.asgi``, the only one serving ``/mcp``); wrk drives it
with a Lua script that cycles through the door's requests (distinct agents, distinct needs, so
nothing is answered from a cache that a real mix would miss). For each door, medians over
``--runs``:

- req/s with ``--connections`` closed-loop connections and the p50/p99 latency of the same run;
- server CPU a request: utime+stime of granian's processes over the run, divided by the requests
  answered; "per web core" is 1,000 ms divided by it;
- PostgreSQL's CPU a request, the same way (its processes share the 2 cores with the server);
- the answers that were not 2xx (must be 0: a door that answers errors fast is not measured).

The database must be seeded and embedded first::

    .venv/bin/python bench/seed.py -n 10000 --workers 2 \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k
    .venv/bin/python bench/semantic_load.py --ingest-only \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k
    .venv/bin/python bench/door_load.py --runs 3 --duration 8 \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    DEFAULT_DATABASE_URL,
    bench_env,
    children_of,
    cpu_seconds,
    machine_summary,
    setup_django,
    wait_quiet,
)
from bench.peer_compare import ours_command, stop, wait_up  # noqa: E402
from bench.read_load import postgres_pids  # noqa: E402
from bench.semantic_load import needs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# One request a line: method, path and a one-line JSON body (or nothing), separated by tabs.
LUA = r"""
local requests = {}
local sent = 0

init = function(args)
  for line in io.lines(args[1]) do
    local method, path, body = line:match("^([^\t]*)\t([^\t]*)\t(.*)$")
    local headers = {}
    if body ~= "" then
      headers["Content-Type"] = "application/json"
      headers["Accept"] = "application/json, text/event-stream"
    else
      body = nil
    end
    table.insert(requests, wrk.format(method, path, headers, body))
  end
end

request = function()
  sent = sent + 1
  return requests[(sent % #requests) + 1]
end
"""


def _mcp(tool: str, arguments: dict[str, Any]) -> str:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    return json.dumps(call, separators=(",", ":"))


def _a2a(text: str) -> str:
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "bench", "role": "ROLE_USER",
                                   "parts": [{"text": text}]}}}  # fmt: skip
    return json.dumps(call, separators=(",", ":"))


def door_requests(count: int, seed: int) -> dict[str, list[tuple[str, str, str]]]:
    """Each door's requests: ``count`` public agents with a card and ``count`` distinct needs."""
    from cards.models import Agent

    ids = [
        str(pk)
        for pk in Agent.objects.filter(latest_snapshot__isnull=False)
        .order_by("?")
        .values_list("pk", flat=True)[:count]
    ]
    if not ids:
        raise SystemExit("no agents with a card: seed the database first (the module's docstring)")
    words = needs(count, seed)
    random.Random(seed).shuffle(words)
    quote = urllib.parse.quote_plus
    return {
        "REST GET /api/v1/agents/{id}": [("GET", f"/api/v1/agents/{i}", "") for i in ids],
        "REST search by meaning (?q=)": [
            ("GET", f"/api/v1/agents?q={quote(need)}&limit=20", "") for need in words
        ],
        "A2A SendMessage (text)": [("POST", "/a2a", _a2a(need)) for need in words],
        "catalogue home page": [("GET", "/", "")],
        "catalogue agent page": [("GET", f"/agents/{i}", "") for i in ids],
        "catalogue search (?q=)": [("GET", f"/?q={quote(need)}", "") for need in words],
        "badge": [("GET", f"/badges/{i}.svg", "") for i in ids],
        "attestation": [("GET", f"/api/v1/agents/{i}/attestation", "") for i in ids],
        # The protocols service (compose): the same site under ASGI, with the MCP server.
        "ASGI: REST GET /api/v1/agents/{id}": [("GET", f"/api/v1/agents/{i}", "") for i in ids],
        "ASGI: MCP get_agent": [("POST", "/mcp", _mcp("get_agent", {"id": i})) for i in ids],
        "ASGI: MCP search_agents (text)": [
            ("POST", "/mcp", _mcp("search_agents", {"text": need})) for need in words
        ],
    }


def _wrk(port: int, lines: str, script: str, connections: int, seconds: int) -> dict[str, Any]:
    out = subprocess.run(
        ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s",
         "--latency", "-s", script, f"http://127.0.0.1:{port}", "--", lines],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)

    def pct(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]
        return float(match.group(1)) * scale

    return {
        "requests": requests,
        "rate": rate,
        "errors": int(errors.group(1)) if errors else 0,
        "p50": pct("50"),
        "p99": pct("99"),
    }


def _command(asgi: bool, port: int, workers: int) -> list[str]:
    """The web service's command (the Dockerfile's granian), or the protocols service's
    (docker-compose.yml: gunicorn with the bounded uvicorn worker, ASGI, /mcp)."""
    if not asgi:
        return ours_command("granian", port, workers)
    return [
        str(Path(sys.executable).parent / "gunicorn"), "-c", "gunicorn.conf.py",
        "-k", "registry.asgi_serving.BoundedUvicornWorker",
        "--bind", f"127.0.0.1:{port}", "registry.asgi:application",
    ]  # fmt: skip


def _start(args: argparse.Namespace, port: int, asgi: bool) -> subprocess.Popen[bytes]:
    env = bench_env(
        args.database_url,
        REDIS_URL=args.redis_url,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        # One client address sends everything: the per-client limits would answer 429s.
        REGISTRY_ANON_RATE="off",
        GUNICORN_WORKERS=str(args.workers),
        REGISTRY_DB_POOL="true" if asgi else "false",
    )
    process = subprocess.Popen(
        _command(asgi, port, args.workers),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{port}/healthz", process, "the server")
    return process


def _check(port: int, door: str, method: str, path: str, body: str) -> None:
    """One request of the door answered 2xx with what it should hold, before it is measured."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=body.encode() or None,
        method=method,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read().decode()
    if '"error"' in text[:200] or '"isError":true' in text:
        raise SystemExit(f"{door}: the door answered an error: {text[:300]}")


def _measure(
    args: argparse.Namespace,
    doors: dict[str, list[tuple[str, str, str]]],
    work: Path,
    script: Path,
    asgi: bool,
) -> list[dict[str, Any]]:
    rows = []
    process = _start(args, args.port, asgi)
    try:
        servers = [process.pid, *children_of(process.pid)]
        for door, reqs in doors.items():
            lines = work / "requests.tsv"
            lines.write_text("".join(f"{m}\t{p}\t{b}\n" for m, p, b in reqs))
            _check(args.port, door, *reqs[0])
            _wrk(args.port, str(lines), str(script), args.connections, 3)  # warm-up
            runs = []
            for _ in range(args.runs):
                wait_quiet()
                postgres = postgres_pids()
                server_before, pg_before = cpu_seconds(servers), cpu_seconds(postgres)
                result = _wrk(args.port, str(lines), str(script), args.connections, args.duration)
                served = max(result["requests"], 1)
                result["server_ms"] = (cpu_seconds(servers) - server_before) * 1000 / served
                result["postgres_ms"] = (cpu_seconds(postgres) - pg_before) * 1000 / served
                runs.append(result)
            row: dict[str, Any] = {
                key: statistics.median(run[key] for run in runs)
                for key in ("rate", "p50", "p99", "server_ms", "postgres_ms")
            }
            row["errors"] = sum(run["errors"] for run in runs)
            row["door"] = door
            rows.append(row)
            print(
                f"{door}: {row['rate']:.0f} req/s, p50 {row['p50']:.1f} ms, "
                f"p99 {row['p99']:.1f} ms, server {row['server_ms']:.2f} ms CPU "
                f"({1000 / row['server_ms']:.0f}/s a core), PostgreSQL "
                f"{row['postgres_ms']:.2f} ms, non-2xx {row['errors']}",
                flush=True,
            )
    finally:
        stop(process)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--port", type=int, default=8794)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--distinct", type=int, default=2000, help="agents and needs per door")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", help="a substring of the doors to measure")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    setup_django(args.database_url)
    doors = door_requests(args.distinct, args.seed)
    if args.only:
        doors = {door: reqs for door, reqs in doors.items() if args.only.lower() in door.lower()}
    print(json.dumps(machine_summary()))
    print(f"granian --workers {args.workers}, wrk -c {args.connections} -d {args.duration}s, "
          f"{args.runs} runs, {args.distinct} distinct agents/needs a door")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as work:
        script = Path(work, "cycle.lua")
        script.write_text(LUA)
        for asgi in (False, True):
            chosen = {d: r for d, r in doors.items() if d.startswith("ASGI: ") == asgi}
            if chosen:
                rows.extend(_measure(args, chosen, Path(work), script, asgi))
    print("\n| door | req/s | p50 ms | p99 ms | server CPU ms | per web core | PostgreSQL ms |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['door']} | {row['rate']:.0f} | {row['p50']:.1f} | {row['p99']:.1f} "
            f"| {row['server_ms']:.2f} | {1000 / row['server_ms']:.0f} | {row['postgres_ms']:.2f} |"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

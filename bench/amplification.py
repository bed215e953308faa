"""Amplification: the requests one destination receives per request the registry is sent.

    .venv/bin/python bench/amplification.py [--interfaces 9000] [--cards 40] [--json out.json]

A counting server on 127.0.0.1 (one destination: one address, several ports and spellings)
notes every request it receives and answers like a small A2A agent (JSON-RPC errors for the
checks). The registry runs in this process on PostgreSQL and Redis, tasks in-process, with the
production politeness settings (a 1 s gap between request starts at a destination, 1,200
requests an hour, 5 s of waiting at most) unless the environment says otherwise. One account:

1. submits the worst card: ``--interfaces`` JSON-RPC interfaces, all on the counting host;
2. asks for its live checks once (``POST /api/v1/agents/{id}/probe``): requests received, the
   smallest gap between two of them, the registry's CPU for that one request;
3. submits one card under six spellings of the host (127.0.0.1, localhost, 127.1, 2130706433,
   0x7f000001, [::ffff:127.0.0.1]) and probes each accepted agent;
4. imports ``--cards`` cards on one origin in one request (``POST /api/v1/imports``).

For each step: requests in (to the registry), requests out (received by the destination), their
ratio (the amplification factor) and the smallest gap between requests received.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import (  # noqa: E402
    ensure_database,
    loopback_agents,
    machine_summary,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_amplification"


class Destination:
    """A counting server: every request's arrival time, method and path."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str, str]] = []
        self.cards: dict[str, bytes] = {}
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "max-age=300")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.note("GET", self.path)
                card = outer.cards.get(self.path)
                self._answer(200 if card else 404, card or b'{"error": "not found"}')

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                outer.note("POST", self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    request = json.loads(raw)
                    code, request_id = -32001, request.get("id")
                    if "noSuchMethod" in str(request.get("method")):
                        code = -32601
                except ValueError:
                    code, request_id = -32700, None
                error = {"code": code, "message": "error"}
                self._answer(
                    200, json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
                )

            def log_message(self, format: str, *args: object) -> None:
                return

        self.servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
        for server in self.servers:
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
        self.port, self.other_port = (s.server_address[1] for s in self.servers)

    def note(self, method: str, path: str) -> None:
        with self._lock:
            self.arrivals.append((time.monotonic(), method, path))

    def since(self, mark: int) -> list[tuple[float, str, str]]:
        with self._lock:
            return self.arrivals[mark:]

    def close(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()


def card(name: str, interfaces: list[str]) -> bytes:
    document = {
        "name": name,
        "description": "A card for the amplification bench.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            for url in interfaces
        ],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echo.", "tags": ["echo"]}],
    }
    return json.dumps(document).encode()


def min_gap(arrivals: list[tuple[float, str, str]]) -> float | None:
    times = sorted(a[0] for a in arrivals)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    return round(min(gaps), 3) if gaps else None


def measured(
    name: str, destination: Destination, requests_in: int, action: Callable[[], Any]
) -> dict[str, Any]:
    mark = len(destination.arrivals)
    wall, cpu = time.monotonic(), time.process_time()
    detail = action()
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    received = destination.since(mark)
    return {
        "step": name,
        "requests_in": requests_in,
        "requests_out": len(received),
        "factor": round(len(received) / max(requests_in, 1), 1),
        "min_gap_s": min_gap(received),
        "wall_s": round(wall, 2),
        "registry_cpu_s": round(cpu, 3),
        "detail": detail,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--interfaces", type=int, default=9000)
    parser.add_argument("--cards", type=int, default=40)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/5")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()

    ensure_database(args.database_url, recreate=True)
    setup_django(
        args.database_url,
        **loopback_agents(
            args.redis_url,
            CELERY_TASK_ALWAYS_EAGER="true",
            REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS="0",
            REGISTRY_ANON_RATE="1000000/minute",
            ALLOWED_HOSTS="testserver,127.0.0.1,localhost",
            # The production politeness, unless the environment sets its own.
            REGISTRY_ORIGIN_MIN_GAP_SECONDS=_env("REGISTRY_ORIGIN_MIN_GAP_SECONDS", "1"),
            REGISTRY_DESTINATION_MIN_GAP_SECONDS=_env("REGISTRY_DESTINATION_MIN_GAP_SECONDS", "1"),
            REGISTRY_DESTINATION_HOURLY_LIMIT=_env("REGISTRY_DESTINATION_HOURLY_LIMIT", "1200"),
        ),
    )
    import redis
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    redis.Redis.from_url(args.redis_url).flushdb()
    user = get_user_model().objects.create_user("amplifier")
    client = APIClient()
    client.force_authenticate(user)

    destination = Destination()
    base = f"http://127.0.0.1:{destination.port}"
    print(json.dumps(machine_summary()))
    print(
        f"gap {settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS:g} s, "
        f"ceiling {settings.REGISTRY_DESTINATION_HOURLY_LIMIT}/h, "
        f"wait {settings.REGISTRY_DESTINATION_MAX_WAIT_SECONDS:g} s, "
        f"live interfaces {getattr(settings, 'REGISTRY_LIVE_MAX_INTERFACES', 'all')}"
    )
    results = []
    try:
        interfaces = [f"{base}/a2a/{n}" for n in range(args.interfaces)]
        destination.cards["/big.json"] = card("Worst", interfaces)
        size = len(destination.cards["/big.json"])

        def submit(url: str) -> Any:
            answer = client.post("/api/v1/agents", {"url": url}, format="json")
            return answer.status_code, answer.json().get("id")

        status, big = None, None

        def submit_big() -> Any:
            nonlocal status, big
            status, big = submit(f"{base}/big.json")
            return {"status": status, "card_bytes": size}

        results.append(measured("submit the worst card", destination, 1, submit_big))

        def probe(agent_id: Any) -> Callable[[], Any]:
            def run() -> Any:
                answer = client.post(f"/api/v1/agents/{agent_id}/probe")
                from cards.models import Agent

                live = Agent.objects.filter(pk=agent_id).values_list("live", flat=True).first()
                live = live or {}
                return {"status": answer.status_code, "counts": live.get("counts")}

            return run

        results.append(measured("probe the worst card", destination, 1, probe(big)))

        destination.cards["/one.json"] = card("One", [f"{base}/a2a/one"])
        spellings = [
            "127.0.0.1",
            "localhost",
            "127.1",
            "2130706433",
            "0x7f000001",
            "[::ffff:127.0.0.1]",
        ]
        accepted: list[Any] = []

        def submit_spellings() -> Any:
            out = {}
            for host in spellings:
                status, agent_id = submit(f"http://{host}:{destination.port}/one.json")
                out[host] = status
                if agent_id and agent_id not in accepted:
                    accepted.append(agent_id)
            return out

        results.append(
            measured("one card under six spellings", destination, len(spellings), submit_spellings)
        )

        def probe_all() -> Any:
            return [probe(agent_id)()["status"] for agent_id in accepted]

        results.append(
            measured("probe each spelling's agent", destination, len(accepted), probe_all)
        )

        many = f"http://127.0.0.1:{destination.other_port}"
        urls = []
        for number in range(args.cards):
            path = f"/import/{number}.json"
            destination.cards[path] = card(f"Imported {number}", [f"{many}/a2a/{number}"])
            urls.append(many + path)

        def import_many() -> Any:
            answer = client.post("/api/v1/imports", {"urls": urls}, format="json")
            return {"status": answer.status_code}

        results.append(
            measured(f"import {args.cards} cards on one origin", destination, 1, import_many)
        )
    finally:
        destination.close()

    print(f"{'step':38} {'in':>4} {'out':>6} {'factor':>7} {'min gap':>8} {'wall':>7} {'cpu':>7}")
    for row in results:
        gap = "-" if row["min_gap_s"] is None else f"{row['min_gap_s']:.3f}"
        print(
            f"{row['step']:38} {row['requests_in']:>4} {row['requests_out']:>6} "
            f"{row['factor']:>7} {gap:>8} {row['wall_s']:>7} {row['registry_cpu_s']:>7}"
        )
        print(f"    {json.dumps(row['detail'])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def _env(name: str, default: str) -> str:
    import os

    return os.environ.get(name) or default


if __name__ == "__main__":
    main()

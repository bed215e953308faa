"""Search benchmark: ``POST /ard/search`` (or ``GET /api/v1/agents?q=``, ``--target v1``) under
gunicorn, driven by wrk with distinct needs.

Reports, medians over ``--runs``:

- one client (wrk -c1): p50 and p99 latency and req/s;
- ``--connections`` (16) closed-loop connections: req/s, p50, p99, and the CPU per request of
  the server (gunicorn's master and workers) and of PostgreSQL, read from ``/proc``;
- the floor in the same run: ``search.semantic.rank`` called in-process for the same needs
  (query embedding included, no HTTP, no JSON), p50.

Needs are generated like bench/semantic_load.py's; with ``--needs`` larger than the requests of
a run (2,000 by default) no need is asked twice, so the need's embedding is never cached; with
``--needs 100`` nearly every request finds it cached. The anonymous limiter is on, its rate
raised out of the way (``--anon-rate``), as in production. The database must be seeded and
embedded first::

    .venv/bin/python bench/seed.py -n 100000 --recreate \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k
    .venv/bin/python bench/semantic_load.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k \\
        .venv/bin/python manage.py assign_identifiers  # ARD lists only identified agents
    .venv/bin/python bench/ard_search.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_sem_bench_100k --runs 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import read_load  # noqa: E402
from bench._common import percentile, setup_django  # noqa: E402
from bench.semantic_load import needs  # noqa: E402

LUA = """
local bodies = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do bodies[#bodies + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/ard/search", {["Content-Type"] = "application/json"},
                    bodies[(n % #bodies) + 1])
end
"""


def bodies(count: int, seed: int) -> list[str]:
    out = []
    for n, text in enumerate(needs(count, seed)):
        body: dict[str, Any] = {"query": {"text": text}, "federation": "none", "pageSize": 10}
        if n % 4 == 3:  # a quarter with an A2A filter as well
            body["query"]["filter"] = {"inputModes": ["text/plain"]}
        out.append(json.dumps(body))
    return out


def v1_paths(count: int, seed: int) -> list[str]:
    """``GET /api/v1/agents?q=`` (ranked by meaning, the default) for the same needs."""
    from urllib.parse import urlencode

    out = []
    for n, body in enumerate(bodies(count, seed)):
        params = {"q": json.loads(body)["query"]["text"], "limit": "10"}
        if n % 4 == 3:
            params["input_mode"] = "text/plain"
        out.append("/api/v1/agents?" + urlencode(params))
    return out


def floor(texts: list[str]) -> tuple[float, float]:
    """In-process ranking of the same needs: the cost without HTTP and JSON (p50), and the
    mean number of agents a page lists (an empty page is cheaper than a real one)."""
    from cards.reads import gate
    from protocols.ard import filters
    from search import semantic

    rows = filters.apply(gate.agents(), {})
    semantic.rank("warm up the model and the index", rows, limit=11)
    times, found = [], 0
    for text in texts:
        started = time.perf_counter()
        found += len(semantic.rank(text, rows, limit=11))
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 50), found / len(texts)


def searchable(target: str) -> int:
    """How many agents the searched door can list (ARD lists only agents with an
    identifier)."""
    from cards.reads import gate
    from protocols.ard import filters

    rows = gate.agents()
    return (filters.apply(rows, {}) if target == "ard" else rows).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="")
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--needs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--target", choices=("ard", "v1"), default="ard")
    parser.add_argument("--anon-rate", default="100000000/minute")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    setup_django(args.database_url)
    if not searchable(args.target):
        # Every answer would be an empty page, measured as if it were a search.
        raise SystemExit(
            "no agent here is listed by ARD: seeded agents have no ARD identifier (a crawl "
            "gives each one). Give them theirs first: DATABASE_URL=... .venv/bin/python "
            "manage.py assign_identifiers"
            if args.target == "ard"
            else "no agent here is visible: seed the database first (bench/seed.py)"
        )
    texts = [json.loads(b)["query"]["text"] for b in bodies(200, args.seed + 1)]
    floor_p50, listed = floor(texts)
    make = bodies if args.target == "ard" else v1_paths
    lines = make(args.needs, args.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        handle.write("\n".join(lines) + "\n")
        bodies_file = handle.name
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(LUA if args.target == "ard" else read_load.LUA)
        script = handle.name
    server = read_load.start_server(args)
    runs: dict[str, list[dict[str, Any]]] = {"one": [], "many": []}
    try:
        # Warm every worker (model, index, references, connections): one keep-alive
        # connection lands on one worker only, so the many connections warm the others.
        read_load.wrk(args.port, bodies_file, script, 1, 3)
        read_load.wrk(args.port, bodies_file, script, args.connections, 5)
        pids, pg = read_load.server_pids(server.pid), read_load.postgres_pids()

        def run(connections: int) -> dict[str, Any]:
            before, pg_before = read_load.cpu_seconds(pids), read_load.cpu_seconds(pg)
            found = read_load.wrk(args.port, bodies_file, script, connections, args.duration)
            served = max(1, found["requests"])
            found["cpu_ms"] = (read_load.cpu_seconds(pids) - before) / served * 1000
            found["pg_cpu_ms"] = (read_load.cpu_seconds(pg) - pg_before) / served * 1000
            return found

        for _ in range(args.runs):
            runs["one"].append(run(1))
            runs["many"].append(run(args.connections))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)

    def median(kind: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[kind])

    errors = sum(run["errors"] for kind in runs.values() for run in kind)
    print(
        f"floor: semantic.rank in-process p50 {floor_p50:.2f} ms, "
        f"{listed:.1f} agents on a page of 11 on average"
    )
    print(
        f"1 client: p50 {median('one', 'p50'):.2f} ms, p99 {median('one', 'p99'):.2f} ms, "
        f"{median('one', 'rps'):.1f} req/s"
    )
    print(
        f"{args.connections} connections: {median('many', 'rps'):.1f} req/s, "
        f"p50 {median('many', 'p50'):.2f} ms, p99 {median('many', 'p99'):.2f} ms"
    )
    for kind in ("one", "many"):
        print(
            f"CPU per request ({kind}): server {median(kind, 'cpu_ms'):.2f} ms, "
            f"PostgreSQL {median(kind, 'pg_cpu_ms'):.2f} ms"
        )
    print(f"non-2xx answers: {errors}")


if __name__ == "__main__":
    main()

"""Read benchmark: the v1 read endpoints under gunicorn, driven by wrk, beside their SQL floor.

For each endpoint it reports, medians over ``--runs``:

- req/s with ``--connections`` (16) closed-loop connections;
- p50 and p99 latency with ``--latency-connections`` (8);
- server CPU per request: utime+stime of the gunicorn master and workers (from /proc) over the
  throughput run, divided by the requests served; the same for the PostgreSQL processes;
- the raw SQL floor: the queries the view issues (captured in-process), each run with
  ``EXPLAIN (ANALYZE)``, planning plus execution time summed per request.

The database must be seeded first (bench/seed.py, then ``manage.py render_documents --all``).
Example::

    .venv/bin/python bench/read_load.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_reads --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))

from bench._common import cpu_seconds  # noqa: E402

LUA = """
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1])
end
"""


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def endpoint_paths(count: int, seed: int) -> dict[str, list[str]]:
    """Concrete URLs for each endpoint, taken from the seeded data."""
    from urllib.parse import quote

    from cards.models import Agent, FacetCount

    rng = random.Random(seed)
    public = Agent.objects.filter(deleted_at__isnull=True, moderation__in=Agent.PUBLIC_STATES)
    ids = [str(pk) for pk in public.order_by("?").values_list("pk", flat=True)[:count]]
    tags = list(
        FacetCount.objects.filter(kind="tag").order_by("-agents").values_list("key", flat=True)[:50]
    )
    pairs = []
    for row in public.exclude(tags=[]).values_list("tags", flat=True)[:2000]:
        if len(row) >= 2:
            pairs.append(rng.sample(list(row), 2))
        if len(pairs) >= 50:
            break
    schemas = list(
        FacetCount.objects.filter(kind="schema")
        .order_by("-agents")
        .values_list("key", flat=True)[:20]
    )
    outputs = list(
        FacetCount.objects.filter(kind="mode", direction="output")
        .order_by("-agents")
        .values_list("key", flat=True)[:20]
    )
    words = []
    for name in public.values_list("name", flat=True)[:500]:
        words += [w for w in re.findall(r"[A-Za-z]{5,}", name)]
    words = sorted(set(words))[:50] or ["agent"]
    q = quote
    return {
        "by-id": [f"/api/v1/agents/{i}" for i in ids],
        "card": [f"/api/v1/agents/{i}/card" for i in ids],
        "first-page": ["/api/v1/agents"],
        "tag": [f"/api/v1/agents?tag={q(t)}" for t in tags],
        "two-tags": [f"/api/v1/agents?tag={q(a)}&tag={q(b)}" for a, b in pairs],
        "schema-mode": [
            f"/api/v1/agents?input_mode={q('application/json;schema=' + s)}" for s in schemas
        ],
        "output-mode": [f"/api/v1/agents?output_mode={q(m)}" for m in outputs],
        "text": [f"/api/v1/agents?q={q(w)}" for w in words],
        "tags-facet": ["/api/v1/tags", "/api/v1/tags?limit=50"],
        "modes-facet": ["/api/v1/modes", "/api/v1/modes?direction=input"],
        "extensions-facet": ["/api/v1/extensions"],
        "skills": ["/api/v1/skills", *[f"/api/v1/skills?tag={q(t)}" for t in tags[:10]]],
    }


def sql_floor(paths: list[str], samples: int) -> float:
    """Median over sample URLs of the summed EXPLAIN ANALYZE time of the queries a view issues."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    totals = []
    for path in paths[:samples]:
        client.get(path)
        with CaptureQueriesContext(connection) as captured:
            client.get(path)
        total = 0.0
        with connection.cursor() as cursor:
            for query in captured.captured_queries:
                sql = query["sql"]
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
                plan = cursor.fetchone()[0]
                plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
                total += plan["Planning Time"] + plan["Execution Time"]
        totals.append(total)
    return statistics.median(totals) if totals else 0.0


def postgres_pids() -> list[int]:
    found = subprocess.run(
        ["pgrep", "-u", "postgres"], capture_output=True, text=True, check=False
    ).stdout.split()
    return [int(pid) for pid in found]


def server_pids(master: int) -> list[int]:
    children = subprocess.run(
        ["pgrep", "-P", str(master)], capture_output=True, text=True, check=False
    ).stdout.split()
    return [master, *(int(c) for c in children)]


def start_server(args: argparse.Namespace) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "DJANGO_SECRET_KEY": "bench-only-secret",
        "DJANGO_DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "GUNICORN_BIND": f"127.0.0.1:{args.port}",
        "GUNICORN_WORKERS": str(args.workers),
        "GUNICORN_THREADS": str(args.threads),
        # One client address sends everything: the per-client limit would answer 429s.
        "REGISTRY_ANON_RATE": getattr(args, "anon_rate", "off"),
    }
    if args.redis_url:
        env["REDIS_URL"] = args.redis_url
    process = subprocess.Popen(
        [str(Path(PYTHON).parent / "gunicorn"), "-c", "gunicorn.conf.py", "registry.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{args.port}/healthz", timeout=1)
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("gunicorn did not start")


def wrk(port: int, paths_file: str, script: str, connections: int, seconds: int) -> dict[str, Any]:
    out = subprocess.run(
        [
            "wrk",
            f"-t{min(connections, 2)}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            script,
            f"http://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "BENCH_PATHS": paths_file},
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)

    def pct(label: str) -> float:
        match = re.search(rf"\s{label}%\s+([\d.]+)(us|ms|s)", out)
        if match is None:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    return {
        "rps": rps,
        "requests": total,
        "errors": int(non2xx.group(1)) if non2xx else 0,
        "p50": pct("50"),
        "p99": pct("99"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--port", type=int, default=8077)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--latency-connections", type=int, default=8)
    parser.add_argument("--endpoints", default="")
    parser.add_argument("--sql-samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")

    setup_django(args.database_url)
    catalogue = endpoint_paths(1000, args.seed)
    wanted = [e for e in args.endpoints.split(",") if e] or list(catalogue)
    floors = {name: sql_floor(catalogue[name], args.sql_samples) for name in wanted}

    server = start_server(args)
    results: dict[str, dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "paths.lua")
            Path(script).write_text(LUA)
            for name in wanted:
                paths_file = os.path.join(tmp, f"{name}.txt")
                Path(paths_file).write_text("\n".join(catalogue[name]) + "\n")
                runs = []
                for _ in range(args.runs):
                    wrk(args.port, paths_file, script, args.connections, 2)  # warm
                    pids, pg = server_pids(server.pid), postgres_pids()
                    before, pg_before = cpu_seconds(pids), cpu_seconds(pg)
                    load = os.getloadavg()[0]
                    thr = wrk(args.port, paths_file, script, args.connections, args.duration)
                    served = max(thr["requests"], 1)
                    cpu = (cpu_seconds(pids) - before) / served * 1000
                    pg_cpu = (cpu_seconds(pg) - pg_before) / served * 1000
                    lat = wrk(
                        args.port, paths_file, script, args.latency_connections, args.duration
                    )
                    runs.append(
                        {
                            "rps": thr["rps"],
                            "errors": thr["errors"] + lat["errors"],
                            "cpu_ms": cpu,
                            "pg_cpu_ms": pg_cpu,
                            "p50": lat["p50"],
                            "p99": lat["p99"],
                            "load": load,
                        }
                    )
                results[name] = {
                    key: statistics.median(r[key] for r in runs) for key in runs[0]
                } | {"sql_ms": floors[name], "runs": runs}
                row = results[name]
                print(
                    f"{name:17s} {row['rps']:8.0f} req/s  cpu {row['cpu_ms']:.2f} ms/req  "
                    f"pg {row['pg_cpu_ms']:.2f} ms/req  "
                    f"p50 {row['p50']:.2f} ms  p99 {row['p99']:.2f} ms  sql {row['sql_ms']:.2f} ms"
                    f"  errors {row['errors']:.0f}",
                    flush=True,
                )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print()
    print(
        f"| endpoint | req/s ({args.connections} conn) | p50 ms ({args.latency_connections}) "
        f"| p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | SQL floor ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in results.items():
        print(
            f"| {name} | {row['rps']:.0f} | {row['p50']:.2f} | {row['p99']:.2f} "
            f"| {row['cpu_ms']:.2f} | {row['pg_cpu_ms']:.2f} | {row['sql_ms']:.2f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

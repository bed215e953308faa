"""Series, metrics directory and scrape time of a web node before and after requests whose
method names are made up (issue 43, section 4).

Starts the production web server (granian, two workers, a shared ``PROMETHEUS_MULTIPROC_DIR``)
on SQLite in a temporary directory, sends one request of each ordinary method to a few routes,
then measures: the series ``/metrics`` exposes, the size of the metrics directory and the
median wall time of five scrapes. Then ``--requests`` anonymous requests (8 threads) with a
random 8-letter method each to ``/api/v1/agents`` (answered 401 or 405), and the same
measurements again. Usage::

    .venv/bin/python bench/metric_series.py --requests 3000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._common import BENCH_SECRET, machine_summary  # noqa: E402
from bench.peer_compare import stop, wait_up  # noqa: E402
from tests.support import free_port  # noqa: E402

ROUTES = ("/api/v1/agents", "/api/v1/tags", "/healthz", "/no-such-page")


def _server(directory: Path, port: int) -> subprocess.Popen[bytes]:
    metrics = directory / "metrics"
    metrics.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_DEBUG")
    }
    env.update(
        ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECRET_KEY=BENCH_SECRET,
        REGISTRY_SQLITE_PATH=str(directory / "db.sqlite3"),
        REGISTRY_ANON_RATE="off",
        REGISTRY_LOG_LEVEL="ERROR",
        PROMETHEUS_MULTIPROC_DIR=str(metrics),
    )
    granian = str(Path(sys.executable).with_name("granian"))
    command = [
        granian, "--interface", "rsgi", "--workers", "2", "--no-ws", "--http", "1",
        "--host", "127.0.0.1", "--port", str(port), "registry.rsgi:application",
    ]  # fmt: skip
    log = (directory / "server.log").open("wb")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _measure(http: httpx.Client, metrics: Path) -> dict[str, Any]:
    times, text = [], ""
    for _ in range(5):
        started = time.perf_counter()
        text = http.get("/metrics").text
        times.append(time.perf_counter() - started)
    series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    size = sum(path.stat().st_size for path in metrics.glob("*.db"))
    return {
        "series": series,
        "directory_mb": round(size / 1e6, 2),
        "scrape_s_median": round(statistics.median(times), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="metric-series-"))
    port = free_port()
    server = _server(directory, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base + "/healthz", server, "granian")
        rng = random.Random(43)
        with httpx.Client(base_url=base, timeout=30) as http:
            for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "NOPE"):
                for route in ROUTES:
                    for _ in range(4):  # both workers, most likely
                        http.request(method, route)
            http.get("/metrics")
            before = _measure(http, directory / "metrics")
            methods = [
                "".join(rng.choices(string.ascii_uppercase, k=8)) for _ in range(args.requests)
            ]

            def send(chunk: list[str]) -> list[int]:
                with httpx.Client(base_url=base, timeout=30) as client:
                    return [client.request(m, "/api/v1/agents").status_code for m in chunk]

            started = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                statuses = [
                    s for part in pool.map(send, [methods[i::8] for i in range(8)]) for s in part
                ]
            elapsed = time.perf_counter() - started
            after = _measure(http, directory / "metrics")
        print(
            json.dumps(
                {
                    "machine": machine_summary(),
                    "requests": args.requests,
                    "seconds": round(elapsed, 2),
                    "statuses": sorted(set(statuses)),
                    "before": before,
                    "after": after,
                },
                indent=2,
            )
        )
    finally:
        stop(server)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Environment for the benchmark scripts: a dedicated database, Django settings, statistics.

Every address used by the benchmarks is a loopback one (127.0.0.1).
"""

from __future__ import annotations

import math
import os
import statistics
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench"
BENCH_SECRET = "bench-only-secret-not-for-production"


def bench_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment the registry runs with in a benchmark: DEBUG off, PostgreSQL."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="registry.settings",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=env.get("DJANGO_SECRET_KEY") or BENCH_SECRET,
        REGISTRY_LOG_LEVEL=env.get("REGISTRY_LOG_LEVEL") or "WARNING",
    )
    env.update(extra)
    return env


def check_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise SystemExit(f"benchmarks only talk to loopback addresses; {url!r} is not one")


def ensure_database(database_url: str) -> None:
    """Create the database named in ``database_url`` if it does not exist."""
    import psycopg
    from psycopg import sql

    check_loopback(database_url)
    parts = urlsplit(database_url)
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise SystemExit(f"no database name in {database_url!r}")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")


def setup_django(database_url: str, **extra: str) -> None:
    """Configure the environment and ``django.setup()`` in this process."""
    os.environ.update(bench_env(database_url, **extra))
    import django

    django.setup()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine_summary() -> dict[str, str]:
    import platform

    info = {"nproc": str(os.cpu_count()), "python": platform.python_version()}
    try:
        with open("/proc/meminfo") as fh:
            info["memory"] = fh.readline().split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info

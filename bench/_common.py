"""Environment for the benchmark scripts: a dedicated database, Django settings, statistics.

Every address used by the benchmarks is a loopback one (127.0.0.1).
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
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
        # Every bench server is on 127.0.0.1, one destination to the politeness gate
        # (registry/http/gate.py): off unless a bench measures it (bench/amplification.py).
        REGISTRY_ORIGIN_MIN_GAP_SECONDS=env.get("REGISTRY_ORIGIN_MIN_GAP_SECONDS") or "0",
        REGISTRY_DESTINATION_MIN_GAP_SECONDS=env.get("REGISTRY_DESTINATION_MIN_GAP_SECONDS") or "0",
        REGISTRY_DESTINATION_HOURLY_LIMIT=env.get("REGISTRY_DESTINATION_HOURLY_LIMIT") or "0",
    )
    env.update(extra)
    return env


def loopback_agents(redis_url: str, **extra: str) -> dict[str, str]:
    """Settings for a bench whose agents are served on 127.0.0.1: http and loopback fetched,
    live checks on, Redis at ``redis_url``; ``extra`` adds or replaces settings."""
    return {
        "REDIS_URL": redis_url,
        "REGISTRY_FETCH_ALLOW_HTTP": "true",
        "REGISTRY_FETCH_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "REGISTRY_LIVE_CHECKS": "true",
        **extra,
    }


def check_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise SystemExit(f"benchmarks only talk to loopback addresses; {url!r} is not one")


def ensure_database(database_url: str, *, recreate: bool = False) -> None:
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
        if recreate:
            if "bench" not in name:
                raise SystemExit(f"refusing to drop {name!r}: only databases named *bench* are")
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
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


# --- CPU accounting: the machine is shared, so measure what else ran ------------------------

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user
    return (total - idle) / _TICK, total / _TICK


def process_cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def cpu_seconds(pids: list[int]) -> float:
    """user + system CPU seconds of the processes ``pids`` (those gone count 0)."""
    return sum(process_cpu_seconds(pid) for pid in pids)


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            found.append(int(entry))
    return found


def busy_cores(interval: float = 1.0) -> float:
    """How many cores' worth of CPU the whole machine used over ``interval`` seconds."""
    import time

    b0, _ = machine_cpu_seconds()
    time.sleep(interval)
    b1, _ = machine_cpu_seconds()
    return (b1 - b0) / interval


def wait_quiet(threshold: float = 0.25, max_wait: float = 90.0) -> float:
    """Wait (bounded) until the machine uses under ``threshold`` cores; return the last reading."""
    import time

    deadline = time.monotonic() + max_wait
    load = busy_cores(1.0)
    while load > threshold and time.monotonic() < deadline:
        load = busy_cores(2.0)
    return load


class CpuTracker:
    """CPU used by a changing set of processes (PostgreSQL backends come and go).

    A thread samples ``pids()`` every ``interval`` seconds and remembers, per process, the CPU
    time at first sight and the latest; a process that exits between samples loses at most one
    interval of its time.
    """

    def __init__(self, pids: Any, interval: float = 0.5) -> None:
        import threading

        self._pids = pids
        self._interval = interval
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self, initial: bool = False) -> None:
        for pid in self._pids():
            cpu = process_cpu_seconds(pid)
            if pid not in self._first:
                self._first[pid] = cpu if initial else 0.0
            self._last[pid] = max(cpu, self._last.get(pid, 0.0))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def __enter__(self) -> CpuTracker:
        self._sample(initial=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def seconds(self) -> float:
        return sum(self._last[pid] - self._first[pid] for pid in self._last)


class PhaseTimer:
    """Inclusive time and calls of wrapped functions, plus SQL statements and their time, by
    ``clock`` (wall time by default; ``time.process_time`` for CPU)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.totals: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.sql_count = 0
        self.sql_seconds = 0.0
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed(*a: Any, **kw: Any) -> Any:
            t = self.clock()
            try:
                return original(*a, **kw)
            finally:
                self.totals[label] = self.totals.get(label, 0.0) + self.clock() - t
                self.calls[label] = self.calls.get(label, 0) + 1

        setattr(owner, attr, timed)
        self._undo.append(lambda: setattr(owner, attr, original))

    def sql(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        t = self.clock()
        try:
            return execute(sql, params, many, context)
        finally:
            self.sql_seconds += self.clock() - t
            self.sql_count += 1

    def reset(self) -> None:
        self.totals, self.calls, self.sql_count, self.sql_seconds = {}, {}, 0, 0.0

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()

"""Two test runs on one machine never meet (issue 47): each run's PostgreSQL test databases
carry the run in their name, databases killed runs left are dropped, and a run asking for a
Redis database another run holds stops at once, naming the variable to set (tests/parallel.py,
docs/development.md, "make test")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.parallel import (
    RedisInUse,
    drop_left_behind,
    left_behind,
    lock_redis_databases,
    process_alive,
    redis_databases,
    with_run_suffix,
)

ROOT = Path(__file__).resolve().parents[1]
REDIS_VARIABLES = ("REDIS_URL", "REDIS_CACHE_URL", "REGISTRY_A2A_CACHE_URL", "CELERY_BROKER_URL")


def _run_id(request: pytest.FixtureRequest) -> int:
    return int(getattr(request.config, "workerinput", {}).get("registry_run", os.getpid()))


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert not process_alive(done.pid)
    return done.pid


@pytest.mark.django_db
def test_the_test_database_carries_the_run(request: pytest.FixtureRequest) -> None:
    name = connection.settings_dict["NAME"]
    if connection.vendor != "postgresql":
        pytest.skip("SQLite test databases are files of the run's own")
    assert name.endswith(f"_run{_run_id(request)}"), name
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is not None:
        assert f"_{workerinput['workerid']}_run" in name, name


def test_only_databases_of_runs_whose_process_is_gone_are_left_behind() -> None:
    names = [
        "test_registry", "test_registry_gw0", "test_registry_gw0_run100", "test_registry_run101",
        "test_registry_gw3_run102", "test_registry_bench_run100", "registry_run100",
        "test_registry_gw0_run200", "test_other_gw0_run100",
    ]  # fmt: skip
    alive = {200}.__contains__
    assert left_behind(names, "test_registry", alive) == [
        "test_registry_gw0_run100", "test_registry_gw3_run102", "test_registry_run101",
    ]  # fmt: skip
    assert with_run_suffix("test_registry_gw1", 4242) == "test_registry_gw1_run4242"


@pytest.mark.django_db
def test_a_killed_runs_databases_are_dropped_and_a_live_ones_kept() -> None:
    """Real databases on the suite's server: one named for a process that is gone (dropped),
    one for a live process (this one: kept)."""
    if connection.vendor != "postgresql":
        pytest.skip("the suite runs on SQLite here")
    import psycopg

    settings_dict: dict[str, Any] = dict(connection.settings_dict)
    base = f"test_sidebyside_{os.getpid()}"
    dead, live = f"{base}_gw7_run{_dead_pid()}", f"{base}_gw7_run{os.getpid()}"
    options = {
        "dbname": "postgres", "host": settings_dict.get("HOST") or None,
        "port": settings_dict.get("PORT") or None, "user": settings_dict.get("USER") or None,
        "password": settings_dict.get("PASSWORD") or None,
    }  # fmt: skip
    with psycopg.connect(**options, autocommit=True) as server:
        for name in (dead, live):
            server.execute(f'CREATE DATABASE "{name}"')
        try:
            assert drop_left_behind(settings_dict, base, process_alive) == [dead]
            rows = server.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", [base + "%"]
            ).fetchall()
            assert [row[0] for row in rows] == [live]
        finally:
            for name in (dead, live):
                server.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_a_second_run_on_a_held_redis_database_stops_saying_what_to_set(tmp_path: Path) -> None:
    """A lock held by another process (a run) is refused with a message naming TEST_REDIS_URL
    and a base nobody holds; this process's own locks go when it lets them go."""
    url = f"redis://127.0.0.1:6399/{(os.getpid() % 6) + 9}"  # a server nobody runs: locks only
    held = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from tests.parallel import lock_redis_databases\n"
         f"locks = lock_redis_databases({url!r}, 2); print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert held.stdout is not None and held.stdout.readline().strip() == "held"
        with pytest.raises(RedisInUse) as refused:
            lock_redis_databases(url, 1)
        message = str(refused.value)
        taken = redis_databases(url, 1)[0]
        assert f"Redis database {taken} of redis://127.0.0.1:6399 is in use" in message
        assert "TEST_REDIS_URL" in message and "REDIS_URL for pytest" in message
        assert f"process {held.pid}" in message
        suggested = message.split("e.g. TEST_REDIS_URL=")[1].split(",")[0]
        for handle in lock_redis_databases(suggested, 1):  # the suggestion is free indeed
            handle.close()
    finally:
        held.kill()
        held.wait()
    for handle in lock_redis_databases(url, 2):  # released with the process that held them
        handle.close()


def test_a_run_beside_this_one_on_its_redis_databases_stops_before_any_test() -> None:
    """A real pytest started on the Redis database this run holds exits with pytest's usage
    error and the message, having run nothing (and flushed nothing)."""
    url = os.environ.get("REDIS_URL", "")
    if not url.startswith(("redis://", "rediss://")):
        pytest.skip("this run uses no Redis: nothing is held")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "tests/test_runs_side_by_side.py::test_only_databases_of_runs_whose_process_is_gone_are_left_behind"],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "is in use by another test run" in done.stderr and "TEST_REDIS_URL" in done.stderr
    assert "passed" not in done.stdout


@pytest.mark.django_db
def test_a_second_run_on_the_same_postgresql_gets_databases_of_its_own() -> None:
    """Another pytest under xdist (worker gw0, as this run has) on the same server while this
    run's databases exist: it makes its own, runs, and drops only those."""
    if connection.vendor != "postgresql":
        pytest.skip("the suite runs on SQLite here")
    env = {k: v for k, v in os.environ.items() if k not in REDIS_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "1",
         "tests/test_runs_side_by_side.py::test_the_test_database_carries_the_run"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    with connection.cursor() as cursor:  # this run's database is still there, and in use
        cursor.execute("SELECT current_database()")
        assert cursor.fetchone()[0] == connection.settings_dict["NAME"]


def test_with_every_database_held_the_message_suggests_none() -> None:
    """Another process holds all 16 databases (CI beside a fresh clone beside a helper): the
    refusal says so without a suggestion, where asking for a free one used to recurse until
    Python's stack ran out."""
    script = (
        "import time\nfrom tests.parallel import lock_redis_databases\n"
        "locks = [h for b in range(16) "
        "for h in lock_redis_databases(f'redis://127.0.0.1:6397/{b}', 1)]\n"
        "print('held', flush=True); time.sleep(60)"
    )
    held = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        assert held.stdout is not None and held.stdout.readline().strip() == "held"
        with pytest.raises(RedisInUse) as refused:
            lock_redis_databases("redis://127.0.0.1:6397/9", 2)
        assert "is in use by another test run" in str(refused.value)
        assert "e.g. TEST_REDIS_URL=" not in str(refused.value)
    finally:
        held.kill()
        held.wait()

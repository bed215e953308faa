"""What each pytest-xdist worker gets of its own, so `make test -n 2` never has two workers
flushing, consuming or counting in the same place.

pytest-django already gives each worker its own test database (``test_<name>_gw0``, ...), and
every test that hands a database to a subprocess builds the URL from the worker's settings.
Redis has no such suffix: the cache, the Celery broker (its queues), the politeness counters
and every ``flushdb`` a test runs live in the database number of ``REDIS_URL``. So worker ``gwN``
runs with ``REDIS_URL`` (and the other Redis URLs the settings read) pointed at database
``base - N`` (modulo 16, Redis's default count): base 15 gives 15 and 14, base 9 gives 9 and 8.
Counting down rather than up keeps the default base (15, the last database) in range.

The URLs must be in the worker's environment before Django reads its settings, which
pytest-django does before any conftest is imported: the controller's ``pytest_configure_node``
(tests/conftest.py) sets them in each worker process before pytest starts there. Subprocesses
the tests start (Celery workers, servers) inherit them."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

# Every environment variable the registry/settings/ package reads a Redis URL from.
REDIS_VARIABLES = ("REDIS_URL", "REDIS_CACHE_URL", "REGISTRY_A2A_CACHE_URL", "CELERY_BROKER_URL")
REDIS_DATABASES = 16


def worker_index(worker_id: str) -> int:
    """``gw3`` -> 3 (xdist's worker ids); ``master`` (no xdist) -> 0."""
    digits = worker_id.removeprefix("gw")
    return int(digits) if digits.isdigit() else 0


def redis_url_for_worker(url: str, index: int) -> str:
    """``url`` with its database number moved down by ``index`` (wrapping at 16); URLs that are
    not ``redis://`` or ``rediss://`` are returned unchanged."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or index == 0:
        return url
    path = parts.path.strip("/")
    base = int(path) if path.isdigit() else 0
    database = (base - index) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{database}"))


def worker_environment(environ: Mapping[str, str], index: int) -> dict[str, str]:
    """The environment variables worker ``index`` must change (empty for the first worker)."""
    return {
        name: redis_url_for_worker(environ[name], index)
        for name in REDIS_VARIABLES
        if environ.get(name) and redis_url_for_worker(environ[name], index) != environ[name]
    }


# --- one run beside another ---------------------------------------------------------------------
# Two runs on one machine (two `make test`, or a `make test` beside a developer's pytest) share
# the PostgreSQL server and the Redis server. PostgreSQL: each run's test databases carry the run
# in their name (``test_registry_gw0_run4242``: the controller's process id), so two runs never
# create, use or drop each other's; a run that was killed leaves its databases behind, and the
# next run drops those whose process is gone. Redis has 16 numbered databases and no names: a run
# holds a lock on each database number it uses (a file lock, released when its process ends),
# and a second run asking for a number in use stops at once with a message naming
# TEST_REDIS_URL, the variable that gives it others.

RUN_SUFFIX = re.compile(r"^(?P<name>.+)_run(?P<pid>\d+)$")


def run_suffix(pid: int) -> str:
    return f"run{pid}"


def with_run_suffix(test_name: str, pid: int) -> str:
    """``test_registry_gw0`` -> ``test_registry_gw0_run4242``."""
    return f"{test_name}_{run_suffix(pid)}"


def left_behind(names: Iterable[str], base: str, alive: Callable[[int], bool]) -> list[str]:
    """The databases of ``names`` that a run of ``base`` (a test database name before any
    suffix, ``test_registry``) made and whose process is gone."""
    out = []
    for name in names:
        match = RUN_SUFFIX.match(name)
        if match is None or alive(int(match["pid"])):
            continue
        stem = match["name"]
        if stem == base or re.fullmatch(re.escape(base) + r"_gw\d+", stem):
            out.append(name)
    return sorted(out)


def drop_left_behind(
    database: Mapping[str, Any], base: str, alive: Callable[[int], bool]
) -> list[str]:
    """Drop the test databases that killed runs of ``base`` left on the server of
    ``database`` (Django's settings of one database), whose process is gone; one still in use,
    or dropped meanwhile by another worker, is left alone. Returns the names dropped."""
    import psycopg

    options = {
        "dbname": "postgres",
        "host": database.get("HOST") or None,
        "port": database.get("PORT") or None,
        "user": database.get("USER") or None,
        "password": database.get("PASSWORD") or None,
    }
    dropped = []
    try:
        with psycopg.connect(**options, autocommit=True, connect_timeout=5) as connection:
            names = [row[0] for row in connection.execute("SELECT datname FROM pg_database")]
            for name in left_behind(names, base, alive):
                try:
                    connection.execute(f'DROP DATABASE "{name}"')
                except psycopg.Error:
                    continue
                dropped.append(name)
    except psycopg.Error:
        pass  # the server's own errors come with the database setup, in its words
    return dropped


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def redis_databases(url: str, workers: int) -> list[int]:
    """The database numbers a run with ``workers`` xdist workers (0: one process) uses."""
    count = max(1, workers)
    return sorted({int(urlsplit(redis_url_for_worker(url, i)).path.strip("/") or 0)
                   for i in range(count)}, reverse=True)  # fmt: skip


class RedisInUse(Exception):
    """Another run holds one of this run's Redis databases."""


def _lock_path(url: str, database: int) -> Path:
    parts = urlsplit(url)
    host = (parts.hostname or "localhost").lower()
    where = f"{host}-{parts.port or 6379}-{database}"
    directory = Path(tempfile.gettempdir()) / "a2a-registry-test-locks"
    if not directory.is_dir():
        directory.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):  # every user's runs lock here, as /tmp itself
            directory.chmod(0o1777)
    return directory / f"redis-{where}.lock"


def _open_lock(path: Path) -> IO[str]:
    """The lock file, made writable by every user; read-only when another user made it (a
    lock needs no write access)."""
    try:
        handle = path.open("a+")
    except PermissionError:
        return path.open("r")
    with contextlib.suppress(OSError):
        path.chmod(0o666)
    return handle


def lock_redis_databases(url: str, workers: int) -> list[IO[str]]:
    """Lock each Redis database the run will use; the open files hold the locks (keep them for
    the run). Raises :class:`RedisInUse`, saying what to set, when another run holds one."""
    if urlsplit(url).scheme not in ("redis", "rediss"):
        return []
    databases = redis_databases(url, workers)
    held, taken, owner = _acquire(url, databases)
    if taken is not None:
        raise RedisInUse(_in_use_message(url, databases, taken, owner))
    return held


def _acquire(url: str, databases: list[int]) -> tuple[list[IO[str]], int | None, str]:
    """Lock every one of ``databases``: (the handles, None, "") when all are free, else
    (nothing held, the first database another run holds, who holds it). Never raises for a
    held database, so asking for a free one on the way to a message cannot recurse."""
    held: list[IO[str]] = []
    for database in databases:
        handle = _open_lock(_lock_path(url, database))
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "another run"
            handle.close()
            for other in held:
                other.close()
            return [], database, owner
        with contextlib.suppress(OSError):  # who holds it, for the other run's message
            handle.seek(0)
            handle.truncate()
            handle.write(f"pytest, process {os.getpid()}")
            handle.flush()
        held.append(handle)
    return held, None, ""


def _in_use_message(url: str, databases: list[int], taken: int, owner: str) -> str:
    free = _suggestion(url, len(databases))
    example = f", e.g. TEST_REDIS_URL={free}" if free else ""
    return (
        f"Redis database {taken} of {_without_database(url)} is in use by another test run "
        f"({owner}); this run needs databases {', '.join(map(str, databases))} and flushes "
        f"them. Give it others: set TEST_REDIS_URL for `make test` (REDIS_URL for pytest){example}"
        ", or wait for the other run to end."
    )


def _without_database(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="", query="", fragment=""))


def _suggestion(url: str, count: int) -> str | None:
    """A base database whose ``count`` numbers nobody holds now (never database 0, where
    applications usually live), or None."""
    for base in range(REDIS_DATABASES - 1, count - 1, -1):
        candidate = urlunsplit(urlsplit(url)._replace(path=f"/{base}"))
        held, taken, _owner = _acquire(candidate, redis_databases(candidate, count))
        for handle in held:
            handle.close()
        if taken is None:
            return candidate
    return None

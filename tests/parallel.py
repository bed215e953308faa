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

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

# Every environment variable registry/settings.py reads a Redis URL from.
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

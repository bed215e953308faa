"""Each xdist worker has its own Redis database, and its settings read it (tests/parallel.py)."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from tests.parallel import redis_url_for_worker, worker_environment, worker_index


@pytest.mark.parametrize(
    ("worker_id", "index"), [("gw0", 0), ("gw1", 1), ("gw12", 12), ("master", 0), ("", 0)]
)
def test_it_reads_the_index_from_the_worker_id(worker_id: str, index: int) -> None:
    assert worker_index(worker_id) == index


@pytest.mark.parametrize(
    ("url", "index", "expected"),
    [
        ("redis://127.0.0.1:6379/15", 0, "redis://127.0.0.1:6379/15"),
        ("redis://127.0.0.1:6379/15", 1, "redis://127.0.0.1:6379/14"),
        ("redis://127.0.0.1:6379/9", 1, "redis://127.0.0.1:6379/8"),
        ("redis://127.0.0.1:6379/1", 3, "redis://127.0.0.1:6379/14"),
        ("redis://127.0.0.1:6379", 1, "redis://127.0.0.1:6379/15"),
        ("rediss://user:pw@cache.example:6380/4?ssl_cert_reqs=none", 2,
         "rediss://user:pw@cache.example:6380/2?ssl_cert_reqs=none"),
        ("memory://", 1, "memory://"),
    ],
)  # fmt: skip
def test_each_worker_moves_down_one_database(url: str, index: int, expected: str) -> None:
    assert redis_url_for_worker(url, index) == expected


def test_only_the_redis_variables_that_are_set_change() -> None:
    environ = {"REDIS_URL": "redis://127.0.0.1:6379/15", "DATABASE_URL": "postgres://x/registry"}
    assert worker_environment(environ, 0) == {}
    assert worker_environment(environ, 1) == {"REDIS_URL": "redis://127.0.0.1:6379/14"}


def test_the_settings_read_this_workers_redis_database(request: pytest.FixtureRequest) -> None:
    """Set too late (after Django read its settings), the cache and the broker would still be
    the first worker's database while the subprocesses got this worker's."""
    url = os.environ.get("REDIS_URL")
    if not url or os.environ.get("REDIS_CACHE_URL") or os.environ.get("CELERY_BROKER_URL"):
        pytest.skip("REDIS_URL alone configures Redis in `make test`")
    assert settings.REDIS_URL == url
    assert settings.CELERY_BROKER_URL == url
    assert settings.CACHES["default"]["LOCATION"] == url
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is None:
        pytest.skip("not under pytest-xdist: one process, the one database of REDIS_URL")
    index = worker_index(workerinput["workerid"])
    assert url == redis_url_for_worker(workerinput["controller_redis_url"], index)

"""A worker that dies holding an origin's politeness slots does not block that origin for ever:
the slots expire a third past the hard time limit, and crawls knocking on the busy origin
meanwhile do not keep them alive (they did: tests/multihost/test_worker_loss.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from cards import politeness
from tests.workers import redis_available, redis_url

ORIGIN = "https://held.example.com"
KEY = f"registry:crawl:inflight:{ORIGIN}"


@pytest.fixture
def shared_redis(settings: Any) -> Iterator[Any]:
    url = redis_url()
    if not redis_available(url):
        pytest.skip("Redis is not reachable; `make test` starts it")
    settings.REDIS_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.REGISTRY_ORIGIN_CONCURRENCY = 1
    settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS = 0
    politeness._redis.cache_clear()
    client = politeness._redis()
    client.delete(KEY)
    yield client
    client.delete(KEY)
    politeness._redis.cache_clear()


def test_slots_outlive_the_hard_time_limit_by_a_third(shared_redis: Any, settings: Any) -> None:
    settings.CELERY_TASK_TIME_LIMIT = 30
    assert politeness.acquire(ORIGIN) == 0
    assert 38 <= shared_redis.ttl(KEY) <= 40


def test_knocking_on_an_origin_a_dead_worker_holds_does_not_keep_its_slot(
    shared_redis: Any,
) -> None:
    assert politeness.acquire(ORIGIN) == 0  # a worker takes the only slot, then dies with it
    shared_redis.expire(KEY, 2)  # taken a while ago: two seconds of it left
    for _ in range(5):
        assert politeness.acquire(ORIGIN) > 0  # the other workers' crawls find it busy
    assert 0 < shared_redis.ttl(KEY) <= 2  # and did not extend it
    time.sleep(2.2)
    assert politeness.acquire(ORIGIN) == 0  # the dead worker's slot is free again

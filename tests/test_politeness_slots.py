"""A worker that dies holding an origin's politeness slots does not block that origin for ever:
the slots expire a third past the hard time limit, and crawls knocking on the busy origin
meanwhile do not keep them alive (they did: tests/multihost/test_worker_loss.py)."""

from __future__ import annotations

import time
from typing import Any

from cards import politeness

ORIGIN = "https://held.example.com"
KEY = f"registry:crawl:inflight:{ORIGIN}"


def test_slots_outlive_the_hard_time_limit_by_a_third(politeness_redis: Any, settings: Any) -> None:
    settings.CELERY_TASK_TIME_LIMIT = 30
    assert politeness.acquire(ORIGIN) == 0
    assert 38 <= politeness_redis.ttl(KEY) <= 40


def test_knocking_on_an_origin_a_dead_worker_holds_does_not_keep_its_slot(
    politeness_redis: Any,
) -> None:
    assert politeness.acquire(ORIGIN) == 0  # a worker takes the only slot, then dies with it
    politeness_redis.expire(KEY, 2)  # taken a while ago: two seconds of it left
    for _ in range(5):
        assert politeness.acquire(ORIGIN) > 0  # the other workers' crawls find it busy
    assert 0 < politeness_redis.ttl(KEY) <= 2  # and did not extend it
    time.sleep(2.2)
    assert politeness.acquire(ORIGIN) == 0  # the dead worker's slot is free again

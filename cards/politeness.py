"""Per-origin limits shared by all workers: at most N crawls in flight, a gap between starts.

State lives in Redis (Celery's rate limits are per worker, not global). Without Redis (the
in-process mode) there is one process and nothing to share, so the gate always opens.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from django.conf import settings

_INFLIGHT = "registry:crawl:inflight:{origin}"
_NEXT = "registry:crawl:next:{origin}"
# A crash must not leave an origin blocked for ever: slots expire after the hard time limit.
_SLOT_TTL = 120


@lru_cache(maxsize=1)
def _redis() -> Any | None:
    url = settings.REDIS_URL
    if not url or settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def acquire(origin: str) -> float:
    """Take a slot for ``origin``: 0 when taken, else the seconds to wait before trying again."""
    client = _redis()
    if client is None:
        return 0.0
    now = time.time()
    next_start = client.get(_NEXT.format(origin=origin))
    if next_start is not None and float(next_start) > now:
        return float(next_start) - now
    key = _INFLIGHT.format(origin=origin)
    pipe = client.pipeline()
    pipe.incr(key)
    pipe.expire(key, _SLOT_TTL)
    count = pipe.execute()[0]
    if count > settings.REGISTRY_ORIGIN_CONCURRENCY:
        client.decr(key)
        return max(settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS, 1.0)
    gap = settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS
    if gap > 0:
        client.set(_NEXT.format(origin=origin), now + gap, ex=max(int(gap) + 1, 1))
    return 0.0


def release(origin: str) -> None:
    client = _redis()
    if client is None:
        return
    key = _INFLIGHT.format(origin=origin)
    if int(client.decr(key)) < 0:
        client.delete(key)


def postpone(origin: str, seconds: float) -> None:
    """An origin asked us to wait (Retry-After): no worker starts a crawl there before then."""
    client = _redis()
    if client is None or seconds <= 0:
        return
    client.set(_NEXT.format(origin=origin), time.time() + seconds, ex=int(seconds) + 1)

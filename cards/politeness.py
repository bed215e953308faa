"""Per-origin limits shared by all workers: at most N crawls in flight, a gap between starts.

State lives in Redis (Celery's rate limits are per worker, not global). Without Redis (the
in-process mode) there is one process and nothing to share, so the gate always opens.
"""

from __future__ import annotations

import logging
import math
import time
from functools import lru_cache
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

_INFLIGHT = "registry:crawl:inflight:{origin}"
_NEXT = "registry:crawl:next:{origin}"


def _slot_ttl() -> int:
    """Seconds an origin's slots outlive their last taking. A crawl holds one at most until the
    hard time limit kills it; a worker that dies holding some never gives them back, so they
    expire a third past that limit (120 s by default)."""
    return math.ceil(settings.CELERY_TASK_TIME_LIMIT * 4 / 3)


@lru_cache(maxsize=1)
def _redis() -> Any | None:
    url = settings.REDIS_URL
    if not url or settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    import redis  # lazy: only with a Redis URL (redis-py costs 45 ms at start-up)

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


# One round trip: refuse while the origin's next start is in the future or its slots are all
# taken; otherwise take a slot and set the next start after the minimum gap. Only taking a slot
# extends the count's life: crawls knocking on an origin whose slots a dead worker holds must
# not keep them alive (they did, and the origin was never crawled again: tests/multihost).
_ACQUIRE = """
local now = tonumber(ARGV[1])
local next_start = tonumber(redis.call('GET', KEYS[1]) or '0')
if next_start > now then return tostring(next_start - now) end
local count = redis.call('INCR', KEYS[2])
if count > tonumber(ARGV[2]) then
  redis.call('DECR', KEYS[2])
  return 'busy'
end
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
local gap = tonumber(ARGV[3])
if gap > 0 then
  redis.call('SET', KEYS[1], tostring(now + gap), 'EX', math.max(math.floor(gap) + 1, 1))
end
return '0'
"""


def acquire(origin: str) -> float:
    """Take a slot for ``origin``: 0 when taken, else the seconds to wait before trying again.

    Fails open (0) when Redis cannot be reached, and says so in the log."""
    client = _redis()
    if client is None:
        return 0.0
    try:
        answer = client.eval(
            _ACQUIRE,
            2,
            _NEXT.format(origin=origin),
            _INFLIGHT.format(origin=origin),
            time.time(),
            settings.REGISTRY_ORIGIN_CONCURRENCY,
            settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS,
            _slot_ttl(),
        )
    except Exception:  # redis raises several types when it is down
        logger.warning("politeness not applied to %s: Redis is unreachable", origin, exc_info=True)
        return 0.0
    text = answer.decode() if isinstance(answer, bytes) else str(answer)
    if text == "busy":
        return max(settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS, 1.0)
    return float(text)


def release(origin: str) -> None:
    """Give back a slot of ``origin``. Never raises: with Redis unreachable (``acquire`` failed
    open, or Redis went away since) there is nothing to give back, and the slot expires on its
    own after ``_slot_ttl()`` seconds."""
    client = _redis()
    if client is None:
        return
    key = _INFLIGHT.format(origin=origin)
    try:
        if int(client.decr(key)) < 0:
            client.delete(key)
    except Exception:  # redis raises several types when it is down
        logger.warning("politeness slot of %s not released: Redis is unreachable", origin)


def postpone(origin: str, seconds: float) -> None:
    """An origin asked us to wait (Retry-After): no worker starts a crawl there before then.
    Never raises: without Redis the wait is not shared, and the log says so."""
    client = _redis()
    if client is None or seconds <= 0:
        return
    try:
        client.set(_NEXT.format(origin=origin), time.time() + seconds, ex=int(seconds) + 1)
    except Exception:  # redis raises several types when it is down
        logger.warning("Retry-After of %s not shared: Redis is unreachable", origin)

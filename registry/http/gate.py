"""The politeness gate: every request the fetcher sends waits its turn at its destination.

A destination is named twice: by its origin in normal form (scheme, host as dialled, port; an IP
literal in any spelling is the address it parses to) and by each address the name resolved to
(an IPv6 address by its /64). A request takes a turn on every name at once, so neither other
spellings of one host nor many origins on one address split the gate. Two limits apply to each
name, across every process that shares the registry's Redis:

* a gap between request starts (``FetchPolicy.min_gap``, ``REGISTRY_ORIGIN_MIN_GAP_SECONDS``);
* a ceiling on requests per clock hour (``FetchPolicy.hourly_limit``,
  ``REGISTRY_DESTINATION_HOURLY_LIMIT``).

A request whose turn is near (``FetchPolicy.max_wait``) sleeps until then; one further off is
refused with ``FetchError("destination-busy")``, and one over the ceiling with
``FetchError("destination-ceiling")``, both transient and carrying ``retry_after``: the caller
defers its work, and the refusal is the registry's own limit, never the destination's fault.

Without a Redis URL (the in-process mode), or while Redis cannot be reached, the gate is kept in
this process's memory: still bounded per process, never open.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpx
from django.conf import settings

from registry.http.addresses import Address, parse_ip_literal
from registry.http.errors import FetchError, parse_retry_after
from registry.http.pinning import Resolutions
from registry.http.policy import FetchPolicy
from registry.http.urls import effective_port

logger = logging.getLogger(__name__)

_PREFIX = "registry:gate:"
_HOUR = 3600
# The longest Retry-After the gate honours for every request to a destination.
_MAX_POSTPONE_SECONDS = 3600.0
# After Redis fails, the gate stays in memory this long before asking Redis again, so an
# outage costs one connect timeout, not one per request.
_REDIS_BACKOFF_SECONDS = 5.0

# One round trip for every name of the destination, on the Redis server's clock (one clock for
# every process): refuse while any name's next start is in the future, or while any name has
# had ``limit`` requests this clock hour; otherwise take a turn on every name. KEYS: the n
# "next start" keys, then the n hour counters' prefixes (the hour is appended here). Answers
# {state, seconds}.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local gap = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local hour = math.floor(now / 3600)
local n = #KEYS / 2
local wait = 0
for i = 1, n do
  local nxt = tonumber(redis.call('GET', KEYS[i]) or '0')
  if nxt - now > wait then wait = nxt - now end
end
if wait > 0 then return {'wait', tostring(wait)} end
if limit > 0 then
  for i = n + 1, 2 * n do
    if tonumber(redis.call('GET', KEYS[i] .. hour) or '0') >= limit then
      return {'ceiling', tostring((hour + 1) * 3600 - now)}
    end
  end
end
for i = 1, n do
  if gap > 0 then
    redis.call('SET', KEYS[i], tostring(now + gap), 'PX', math.ceil(gap * 1000) + 1000)
  end
  if redis.call('INCR', KEYS[n + i] .. hour) == 1 then
    redis.call('EXPIRE', KEYS[n + i] .. hour, 3660)
  end
end
return {'ok', '0'}
"""

# A destination's rest (Retry-After), from the Redis server's clock.
_POSTPONE = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i = 1, #KEYS do
  local nxt = tonumber(redis.call('GET', KEYS[i]) or '0')
  if until_ > nxt then
    redis.call('SET', KEYS[i], tostring(until_), 'PX', math.ceil(tonumber(ARGV[1]) * 1000) + 1000)
  end
end
return 1
"""


def origin_name(scheme: str, host: str, port: int) -> str:
    """The origin as the gate names it: ``https://example.com:443``; an IP literal is the
    address it is (``127.1`` and ``0x7f000001`` are ``127.0.0.1``)."""
    bare = host.strip("[]").rstrip(".").lower()
    literal = parse_ip_literal(bare)
    if literal is not None:
        bare = address_name(literal).removeprefix("ip:")
    return f"{scheme.lower()}://{bare}:{port}"


def address_name(ip: Address) -> str:
    """``ip:203.0.113.7``; an IPv6 address by its /64 (one host's usual allotment), an
    IPv4-mapped one as the IPv4 address it carries."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"ip:{ip.ipv4_mapped}"
        return f"ip:{ipaddress.IPv6Network((int(ip) >> 64 << 64, 64))}"
    return f"ip:{ip}"


@dataclass(frozen=True)
class Turn:
    """What the gate answered: ``ok``, ``wait`` (``seconds`` until the next start) or
    ``ceiling`` (``seconds`` until the hour's counters start again)."""

    state: str
    seconds: float = 0.0


def _hour(now: float) -> int:
    return int(now // _HOUR)


def _until_next_hour(now: float) -> float:
    return (_hour(now) + 1) * _HOUR - now


class _MemoryGate:
    """The gate of one process: the in-process mode, and the stand-in while Redis is away."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._counts: dict[tuple[str, int], int] = {}

    def take(self, names: Sequence[str], now: float, gap: float, limit: int) -> Turn:
        hour = _hour(now)
        with self._lock:
            wait = max((self._next.get(name, 0.0) - now for name in names), default=0.0)
            if wait > 0:
                return Turn("wait", wait)
            if limit > 0 and any(self._counts.get((n, hour), 0) >= limit for n in names):
                return Turn("ceiling", _until_next_hour(now))
            if len(self._counts) > 50_000:  # old hours go; nothing else ever grows
                self._counts = {k: v for k, v in self._counts.items() if k[1] == hour}
                self._next = {k: v for k, v in self._next.items() if v > now}
            for name in names:
                if gap > 0:
                    self._next[name] = now + gap
                self._counts[(name, hour)] = self._counts.get((name, hour), 0) + 1
        return Turn("ok")

    def postpone(self, names: Sequence[str], until: float) -> None:
        with self._lock:
            for name in names:
                self._next[name] = max(self._next.get(name, 0.0), until)

    def clear(self) -> None:
        with self._lock:
            self._next.clear()
            self._counts.clear()


_memory = _MemoryGate()
_redis_down_until = 0.0


@lru_cache(maxsize=1)
def _redis_client(url: str) -> Any:
    import redis  # lazy: only with a Redis URL (redis-py costs 45 ms at start-up)

    return redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)


def _redis() -> Any | None:
    """The shared Redis, or None: no Redis URL set, or it failed a moment ago."""
    url = getattr(settings, "REDIS_URL", None)
    if not url or time.monotonic() < _redis_down_until:
        return None
    return _redis_client(url)


def _redis_failed(exc: BaseException) -> None:
    global _redis_down_until
    _redis_down_until = time.monotonic() + _REDIS_BACKOFF_SECONDS
    logger.warning(
        "politeness gate kept in this process for %g s: Redis is unreachable (%s)",
        _REDIS_BACKOFF_SECONDS,
        exc,
    )


def _take(names: Sequence[str], gap: float, limit: int) -> Turn:
    client = _redis()
    if client is not None:
        keys = [f"{_PREFIX}next:{n}" for n in names] + [f"{_PREFIX}count:{n}:" for n in names]
        try:
            state, seconds = client.eval(_TAKE, len(keys), *keys, gap, limit)
        except Exception as exc:  # redis raises several types when it is down
            _redis_failed(exc)
        else:
            text = state.decode() if isinstance(state, bytes) else str(state)
            return Turn(text, float(seconds))
    return _memory.take(names, time.time(), gap, limit)


def take_turn(
    names: Sequence[str], *, gap: float, limit: int, max_wait: float, url: str = ""
) -> None:
    """Wait for the destination's turn (at most ``max_wait`` seconds in all), then take it;
    FetchError ``destination-busy`` or ``destination-ceiling`` when it cannot be had."""
    if gap <= 0 and limit <= 0:
        return
    waited = 0.0
    while True:
        turn = _take(names, gap, limit)
        if turn.state == "ok":
            return
        if turn.state == "ceiling":
            raise FetchError(
                "destination-ceiling",
                f"the registry's limit of {limit} requests an hour to {names[0]} is reached "
                f"(the next hour starts in {math.ceil(turn.seconds)} s)",
                url=url,
                transient=True,
                retry_after=turn.seconds,
            )
        if waited + turn.seconds > max_wait:
            raise FetchError(
                "destination-busy",
                f"the registry's turn at {names[0]} comes in {turn.seconds:.1f} s, later than "
                f"this request may wait ({max_wait:g} s)",
                url=url,
                transient=True,
                retry_after=turn.seconds,
            )
        time.sleep(turn.seconds)
        waited += turn.seconds


def postpone(names: Sequence[str], seconds: float) -> None:
    """The destination asked us to wait (Retry-After): no request starts there before then."""
    if seconds <= 0 or not names:
        return
    client = _redis()
    if client is not None:
        keys = [f"{_PREFIX}next:{name}" for name in names]
        try:
            client.eval(_POSTPONE, len(keys), *keys, seconds)
            return
        except Exception as exc:  # redis raises several types when it is down
            _redis_failed(exc)
    _memory.postpone(names, time.time() + seconds)


def reset_memory() -> None:
    """Forget this process's gate (tests start each case with a fresh one)."""
    global _redis_down_until
    _memory.clear()
    _redis_down_until = 0.0


def wait_turn(
    url: httpx.URL, policy: FetchPolicy, resolutions: Resolutions, deadline: float
) -> list[str]:
    """The fetcher's request to ``url`` waits its turn: the destination is named by its origin
    and by every address the name resolves to (resolved here, once, and dialled from
    ``resolutions``). Returns those names ([] with the gate off)."""
    if policy.min_gap <= 0 and policy.hourly_limit <= 0:
        return []
    host = url.raw_host.decode("ascii")
    port = effective_port(url)
    try:
        addresses = resolutions.addresses(host, port, max(deadline - time.monotonic(), 0.001))
    except FetchError as err:
        err.url = err.url or str(url)
        raise
    names = [origin_name(url.scheme, host, port)]
    for ip in addresses:
        name = address_name(ip)
        if name not in names:
            names.append(name)
    take_turn(
        names, gap=policy.min_gap, limit=policy.hourly_limit, max_wait=policy.max_wait, url=str(url)
    )
    return names


def answered(names: Sequence[str], status: int, retry_after: str | None) -> None:
    """A destination that answered 429 or 503 with Retry-After gets that rest from every
    request of the registry (crawls, checks, messages), not only from the one that asked."""
    if not names or status not in (429, 503):
        return
    seconds = parse_retry_after(retry_after)
    if seconds:
        postpone(names, min(seconds, _MAX_POSTPONE_SECONDS))

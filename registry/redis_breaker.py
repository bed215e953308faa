"""The cache's Redis connections, which give up at once while their server is known to be away.

With Redis down or hung, every cache call used to wait for its own timeout: redis-py 8 waits 5 s
for a connection and 5 s for an answer by default, so an anonymous ``/mcp`` ``tools/list`` (the
rate limiter's one call) took 5.5 s with Redis stopped by ``SIGSTOP``, every time (issue 43,
section 5). Here one failure to connect, send or read opens a per-process breaker for the
server (host and port): for :data:`OPEN_SECONDS` every call fails at once with
:class:`Unavailable` (a ``redis.ConnectionError``, which every caller already treats as Redis
being down: limits fail open, the A2A store answers -32603). After that one call is let through
to try; the others keep failing at once until it answers (closed again) or fails (open again).
So a request waits for Redis at most once per :data:`OPEN_SECONDS` per process, and no longer
than the cache's socket timeouts (1 s: registry/settings/cache.py), and the cache comes back at
most :data:`OPEN_SECONDS` after Redis does.

``CACHES`` use it as ``"pool_class": "registry.redis_breaker.ConnectionPool"`` (plain
``redis://`` servers; ``rediss://`` and unix sockets keep redis-py's own connections).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

OPEN_SECONDS = 3.0
_FAILURES = (RedisConnectionError, RedisTimeoutError, OSError)


class Unavailable(RedisConnectionError):
    """Redis failed a moment ago: not tried again yet."""


class Breaker:
    """One Redis server's state in this process: closed (calls go through), open until a time
    (calls fail at once), then one trial call."""

    def __init__(self, name: str, seconds: float | None = None) -> None:
        self.name = name
        self.seconds = OPEN_SECONDS if seconds is None else seconds
        self._lock = threading.Lock()
        self._open_until = 0.0
        self._tripped = False

    def before(self) -> None:
        """Raise :class:`Unavailable` while open; past that, let one caller through to try."""
        if not self._tripped:
            return
        with self._lock:
            now = time.monotonic()
            if now < self._open_until:
                raise Unavailable(
                    f"Redis at {self.name} failed less than {self.seconds:g} s ago; not tried"
                )
            self._open_until = now + self.seconds  # this caller's trial; the rest wait for it

    def succeeded(self) -> None:
        if self._tripped:
            with self._lock:
                self._tripped = False
            logger.warning("Redis at %s answers again", self.name)

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            first = not self._tripped
            self._tripped = True
            self._open_until = time.monotonic() + self.seconds
        if first:
            logger.warning(
                "Redis at %s failed (%s: %s): calls fail at once for %g s at a time until it "
                "answers",
                self.name,
                exc.__class__.__name__,
                exc,
                self.seconds,
            )


_breakers: dict[str, Breaker] = {}
_breakers_lock = threading.Lock()


def breaker(host: str, port: int) -> Breaker:
    """The breaker of the Redis server at ``host:port`` (one a process, shared by its pools)."""
    name = f"{host}:{port}"
    with _breakers_lock:
        found = _breakers.get(name)
        if found is None:
            found = _breakers[name] = Breaker(name)
        return found


def reset() -> None:
    """Forget every breaker's state (tests)."""
    with _breakers_lock:
        _breakers.clear()


class GuardedConnection(redis.Connection):
    """redis-py's TCP connection, failing at once while its server's breaker is open."""

    def _breaker(self) -> Breaker:
        return breaker(str(self.host), int(self.port))

    def connect(self) -> None:
        if self._sock is not None:  # already connected: nothing to wait for
            return
        guard = self._breaker()
        guard.before()
        try:
            super().connect()
        except _FAILURES as exc:
            guard.failed(exc)
            raise
        guard.succeeded()

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        try:
            super().send_packed_command(command, check_health)
        except _FAILURES as exc:
            self._breaker().failed(exc)
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except _FAILURES as exc:
            self._breaker().failed(exc)
            raise


class ConnectionPool(redis.ConnectionPool):
    """redis-py's pool of :class:`GuardedConnection` (for ``redis://`` URLs)."""

    def __init__(self, connection_class: type[Any] = redis.Connection, **kwargs: Any) -> None:
        if connection_class is redis.Connection:
            connection_class = GuardedConnection
        super().__init__(connection_class=connection_class, **kwargs)

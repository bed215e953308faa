"""A Celery worker that loses Redis with a message unacknowledged keeps running.

Found by the failure drills (tests/faults/test_drills.py, issue 46): Redis stopped while a
prefork worker had a crawl's message delivered and unacknowledged, and the worker exited
("Unrecoverable error: AttributeError: 'NoneType' object has no attribute 'hostname'").
Celery 5.7's consumer, on losing the broker, first collects the connection
(``Connection.collect``: closes its channels, then detaches the transport, ``client = None``),
then closes it. When the channel's first close failed (its pending ``BRPOP`` read raised the
connection error, which kombu swallows), the second close tries to give the unacknowledged
message back, and kombu's Redis channel builds a client from the detached transport's
``client``: an ``AttributeError``, which neither kombu's nor Celery's cleanup ignores.

:func:`install` makes that step raise Redis' ``ConnectionError`` instead (what it is: the
connection is gone), one of the transport's connection errors, which the cleanup ignores as it
means to. The message stays in Redis' unacknowledged set and is delivered again after the
visibility timeout, as for a worker killed outright; the crawl's own lease brings the agent
back sooner (docs/crawling.md). Test: tests/test_redis_broker_close.py.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as transport
from redis.exceptions import ConnectionError as RedisConnectionError

_installed: list[bool] = []


def install() -> None:
    """Patch kombu's Redis channel once (idempotent)."""
    if _installed:
        return
    original = transport.Channel._connparams

    def connparams(self: Any, asynchronous: bool = False) -> Any:
        if getattr(self.connection, "client", None) is None:
            raise RedisConnectionError("the broker connection was closed")
        return original(self, asynchronous=asynchronous)

    transport.Channel._connparams = connparams  # type: ignore[method-assign]
    _installed.append(True)

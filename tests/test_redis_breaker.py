"""The cache's Redis connections give up at once while their server is known to be away
(registry/redis_breaker.py; issue 43, section 5): a loopback listener that accepts connections
and never answers stands for a hung Redis, a real redis-server for one that answers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from registry import redis_breaker
from tests.workers import redis_available, redis_url


@pytest.fixture(autouse=True)
def _fresh_breakers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(redis_breaker, "OPEN_SECONDS", 0.6)
    redis_breaker.reset()
    yield
    redis_breaker.reset()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose connections are accepted and never answered."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    for connection in held:
        connection.close()
    server.close()


def _client(port: int) -> redis.Redis:
    pool = redis_breaker.ConnectionPool(
        host="127.0.0.1", port=port, socket_timeout=0.3, socket_connect_timeout=0.3
    )
    return redis.Redis(connection_pool=pool)


def _timed_failure(client: redis.Redis) -> tuple[type[BaseException], float]:
    started = time.monotonic()
    with pytest.raises(redis.ConnectionError) as caught:
        client.get("k")
    return caught.type, time.monotonic() - started


def test_a_hung_redis_is_waited_for_once_then_tried_again_after_a_pause(silent_port: int) -> None:
    client = _client(silent_port)
    started = time.monotonic()
    with pytest.raises((redis.TimeoutError, redis.ConnectionError)):
        client.get("k")  # waits for its socket timeout
    assert 0.25 <= time.monotonic() - started < 1.5
    # Every call now fails at once, another pool to the same server too.
    for other in (client, _client(silent_port)):
        kind, took = _timed_failure(other)
        assert kind is redis_breaker.Unavailable and took < 0.05
    time.sleep(0.7)  # the breaker lets one call try again
    started = time.monotonic()
    with pytest.raises((redis.TimeoutError, redis.ConnectionError)) as trial:
        client.get("k")
    assert trial.type is not redis_breaker.Unavailable
    assert time.monotonic() - started >= 0.25
    assert _timed_failure(client)[0] is redis_breaker.Unavailable


def test_a_redis_that_answers_again_is_used_again() -> None:
    url = redis_url()
    if not redis_available(url):
        pytest.skip("Redis is not reachable; `make test` starts it")
    pool = redis_breaker.ConnectionPool.from_url(url, socket_timeout=1)
    client = redis.Redis(connection_pool=pool)
    assert client.ping()
    address = pool.connection_kwargs
    guard = redis_breaker.breaker(str(address["host"]), int(address["port"]))
    guard.failed(redis.ConnectionError("as if it had been down"))
    assert _timed_failure(redis.Redis(connection_pool=pool.__class__.from_url(url)))[0] is (
        redis_breaker.Unavailable
    )
    time.sleep(0.7)
    assert redis.Redis(connection_pool=pool.__class__.from_url(url)).ping()
    assert redis.Redis(connection_pool=pool.__class__.from_url(url)).ping()

"""Django's Redis cache, with its reads counted in django-prometheus's cache series.

django-prometheus ships such a backend (``NativeRedisCache``), but in a module that imports the
``django-redis`` package, which the registry does not use. This one counts the same series
(``django_cache_get_total``, ``..._hits_total``, ``..._misses_total``, ``..._fail_total``, label
``backend="redis"``) around Django's own backend, whose client it keeps rather than makes for
every call. A miss is a ``None`` read: the registry stores no ``None``; a stored ``0`` or ``""``
is a hit and is returned as it is.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from django_prometheus.cache.metrics import (
    django_cache_get_fail_total,
    django_cache_get_total,
    django_cache_hits_total,
    django_cache_misses_total,
)

BACKEND = "redis"


class _KeptClients(RedisCacheClient):
    """Django's client, which makes a ``redis.Redis`` for every call (about 0.3 ms of CPU each:
    a fifth of the anonymous limiter's cost, docs/benchmarks.md "Issue 49: the hot reads"),
    keeping one per connection pool instead. A ``redis.Redis`` holds no connection of its own
    (each command takes one from the pool and gives it back), so threads can share it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own two helpers, which django-stubs does not declare.
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            make = self._client  # type: ignore[attr-defined]
            client = self._clients[id(pool)] = make(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _KeptClients

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        django_cache_get_total.labels(backend=BACKEND).inc()
        try:
            value = super().get(key, None, version)
        except Exception:  # Redis is down: counted, and raised as Django's backend does
            django_cache_get_fail_total.labels(backend=BACKEND).inc()
            raise
        if value is None:
            django_cache_misses_total.labels(backend=BACKEND).inc()
            return default
        django_cache_hits_total.labels(backend=BACKEND).inc()
        return value

"""Django's Redis cache, with its reads counted in django-prometheus's cache series.

django-prometheus ships such a backend (``NativeRedisCache``), but in a module that imports the
``django-redis`` package, which the registry does not use. This one counts the same series
(``django_cache_get_total``, ``..._hits_total``, ``..._misses_total``, ``..._fail_total``, label
``backend="redis"``) around Django's own backend. A miss is a ``None`` read: the registry stores
no ``None``; a stored ``0`` or ``""`` is a hit and is returned as it is.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django_prometheus.cache.metrics import (
    django_cache_get_fail_total,
    django_cache_get_total,
    django_cache_hits_total,
    django_cache_misses_total,
)

BACKEND = "redis"


class RedisCache(DjangoRedisCache):
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

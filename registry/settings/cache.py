"""The cache (throttle counters, JWKS documents, anonymous A2A tasks) and its bounds."""

from __future__ import annotations

from typing import Any

from registry.env import env_int, env_optional, env_str

# Reads are counted (registry.metrics_cache: Django's Redis cache, measured; docs/operations.md).
# Every call waits at most 1 s for Redis (redis-py's default is 5 s), and once Redis has failed
# the calls of the next 3 s fail at once (registry/redis_breaker.py, docs/security.md).
_REDIS_CACHE_OPTIONS: dict[str, Any] = {
    "pool_class": "registry.redis_breaker.ConnectionPool",
    "socket_connect_timeout": 1,
    "socket_timeout": 1,
}
CACHES: dict[str, dict[str, Any]]
if env_optional("REDIS_URL") is not None:
    CACHES = {
        "default": {
            "BACKEND": "registry.metrics_cache.RedisCache",
            "LOCATION": env_str("REDIS_CACHE_URL", env_str("REDIS_URL", "")),
            "KEY_PREFIX": "registry",
            "OPTIONS": _REDIS_CACHE_OPTIONS,
        },
        # Anonymous A2A tasks: a key space of their own, bounded (REGISTRY_A2A_* below); point
        # REGISTRY_A2A_CACHE_URL at a Redis with `maxmemory` to keep them off the broker's.
        "a2a": {
            "BACKEND": "registry.metrics_cache.RedisCache",
            "LOCATION": env_str(
                "REGISTRY_A2A_CACHE_URL", env_str("REDIS_CACHE_URL", env_str("REDIS_URL", ""))
            ),
            "KEY_PREFIX": "registry-a2a",
            "OPTIONS": {**_REDIS_CACHE_OPTIONS, "socket_connect_timeout": 2, "socket_timeout": 2},
        },
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# A2A tasks (protocols/a2a.py): kept this many seconds for GetTask; at most this many bytes each
# (over it the history is left out, still over it the task is not kept); at most this many per
# client and this many bytes for all clients per TTL window (docs/security.md).
REGISTRY_A2A_TASK_TTL = env_int("REGISTRY_A2A_TASK_TTL", 600, minimum=1)
REGISTRY_A2A_TASK_MAX_BYTES = env_int("REGISTRY_A2A_TASK_MAX_BYTES", 64 * 1024, minimum=1024)
REGISTRY_A2A_TASKS_PER_CLIENT = env_int("REGISTRY_A2A_TASKS_PER_CLIENT", 60, minimum=0)
REGISTRY_A2A_STORE_MAX_BYTES = env_int("REGISTRY_A2A_STORE_MAX_BYTES", 32 * 1024 * 1024, minimum=0)

# The anonymous agent page, kept rendered per version of the agent's row (cards/catalogue/
# page_cache.py): how long an entry lives; 0 keeps none.
REGISTRY_AGENT_PAGE_CACHE_SECONDS = env_int("REGISTRY_AGENT_PAGE_CACHE_SECONDS", 600, minimum=0)

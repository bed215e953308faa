"""Metrics (docs/operations.md; docs/configuration.md, "Metrics").

Requests (django-prometheus's middleware around all the others: registry/settings/base.py),
PostgreSQL queries (registry.postgresql) and cache reads (registry.metrics_cache, the backend of
the Redis caches in registry/settings/cache.py); the registry's own series are in
registry/metrics.py. Several processes: PROMETHEUS_MULTIPROC_DIR (read by prometheus_client).
"""

from __future__ import annotations

from registry.env import ConfigError, env_int, env_networks, env_optional, env_str

# /metrics answers clients in these networks ("none": no address is enough) or with
# `Authorization: Bearer <REGISTRY_METRICS_TOKEN>`; anyone else gets a 404.
REGISTRY_METRICS_ALLOW = (
    []
    if env_str("REGISTRY_METRICS_ALLOW", "").lower() == "none"
    else env_networks("REGISTRY_METRICS_ALLOW", default=("127.0.0.0/8", "::1/128"))
)
REGISTRY_METRICS_TOKEN = env_optional("REGISTRY_METRICS_TOKEN")
if REGISTRY_METRICS_TOKEN is not None and len(REGISTRY_METRICS_TOKEN) < 16:
    raise ConfigError("REGISTRY_METRICS_TOKEN must be at least 16 characters (a random value)")
# A Celery worker's main process serves its node's metrics on this port (0: not at all), bound
# to this address: nothing else guards it (docs/operations.md, "Worker nodes").
REGISTRY_METRICS_PORT = env_int("REGISTRY_METRICS_PORT", 0, minimum=0)
if REGISTRY_METRICS_PORT > 65535:
    raise ConfigError(f"REGISTRY_METRICS_PORT must be a port number (got {REGISTRY_METRICS_PORT})")
REGISTRY_METRICS_ADDRESS = env_str("REGISTRY_METRICS_ADDRESS", "127.0.0.1")

"""Crawling: retries, intervals, leases, politeness per destination, imports and ARD."""

from __future__ import annotations

from registry.env import env_bool, env_float, env_int, env_list

REGISTRY_CRAWL_MAX_RETRIES = env_int("REGISTRY_CRAWL_MAX_RETRIES", 5, minimum=0)
# First retry after about this long; each further retry doubles it (with jitter), up to an hour.
REGISTRY_CRAWL_RETRY_BASE_SECONDS = env_float("REGISTRY_CRAWL_RETRY_BASE_SECONDS", 10.0)
REGISTRY_CRAWL_INTERVAL_SECONDS = env_int("REGISTRY_CRAWL_INTERVAL_SECONDS", 6 * 3600, minimum=300)
REGISTRY_CRAWL_MIN_INTERVAL_SECONDS = env_int(
    "REGISTRY_CRAWL_MIN_INTERVAL_SECONDS", 300, minimum=60
)
REGISTRY_CRAWL_MAX_INTERVAL_SECONDS = env_int(
    "REGISTRY_CRAWL_MAX_INTERVAL_SECONDS", 7 * 86400, minimum=300
)
REGISTRY_CRAWL_BACKOFF_BASE_SECONDS = env_int("REGISTRY_CRAWL_BACKOFF_BASE_SECONDS", 300, minimum=1)
REGISTRY_UNREACHABLE_AFTER_FAILURES = env_int("REGISTRY_UNREACHABLE_AFTER_FAILURES", 5, minimum=1)
REGISTRY_GONE_AFTER_SECONDS = env_int("REGISTRY_GONE_AFTER_SECONDS", 7 * 86400, minimum=0)
REGISTRY_ATTEMPT_RETENTION_DAYS = env_int("REGISTRY_ATTEMPT_RETENTION_DAYS", 90, minimum=1)
REGISTRY_SWEEP_BATCH = env_int("REGISTRY_SWEEP_BATCH", 500, minimum=1)
# Due agents per crawl task: the sweep queues them in batches (one message, one hand-off to a
# worker process and one acknowledgement each); 1 queues every crawl on its own.
REGISTRY_CRAWL_BATCH = env_int("REGISTRY_CRAWL_BATCH", 8, minimum=1)
# How long a sweep's claim (or a submission's queued crawl) keeps an agent out of later sweeps
# while its crawl waits in the queue; a message lost with Redis is swept again after this
# (docs/crawling.md, "Faults"; docs/deploy.md).
REGISTRY_CRAWL_LEASE_SECONDS = env_int("REGISTRY_CRAWL_LEASE_SECONDS", 600, minimum=10)
# Once its crawl runs, the row is held for this long, renewed every third of it while the crawl
# goes on: a crawl whose worker is killed, or cancelled when Redis goes away, is due again
# this long after its worker last renewed it (cards/scheduling.py).
REGISTRY_CRAWL_RUNNING_LEASE_SECONDS = env_int(
    "REGISTRY_CRAWL_RUNNING_LEASE_SECONDS", 90, minimum=3
)
REGISTRY_SWEEP_INTERVAL_SECONDS = env_float("REGISTRY_SWEEP_INTERVAL_SECONDS", 30.0)
# Politeness towards each origin, shared by all workers through Redis.
REGISTRY_ORIGIN_CONCURRENCY = env_int("REGISTRY_ORIGIN_CONCURRENCY", 2, minimum=1)
REGISTRY_ORIGIN_MIN_GAP_SECONDS = env_float("REGISTRY_ORIGIN_MIN_GAP_SECONDS", 1.0, allow_zero=True)
# The politeness gate every outbound request passes (registry/http/gate.py, docs/fetch-policy.md):
# a gap between request starts at one destination (its origin and each address it resolves to;
# by default the origin gap above), at most this many requests to one destination in a clock
# hour across every agent and account (0: no ceiling), and how long a request may sleep for its
# turn before it is refused as busy (the crawl or check is deferred, never failed).
REGISTRY_DESTINATION_MIN_GAP_SECONDS = env_float(
    "REGISTRY_DESTINATION_MIN_GAP_SECONDS", REGISTRY_ORIGIN_MIN_GAP_SECONDS, allow_zero=True
)
REGISTRY_DESTINATION_HOURLY_LIMIT = env_int("REGISTRY_DESTINATION_HOURLY_LIMIT", 1200, minimum=0)
REGISTRY_DESTINATION_MAX_WAIT_SECONDS = env_float(
    "REGISTRY_DESTINATION_MAX_WAIT_SECONDS", 5.0, allow_zero=True
)
# New agents start approved (an open registry; curators hide or reject) unless this is false.
REGISTRY_AUTO_APPROVE = env_bool("REGISTRY_AUTO_APPROVE", True)
# ARD (docs/ard.md): peer registries for federated search, and how long `auto` waits for them.
REGISTRY_ARD_PEERS = env_list("REGISTRY_ARD_PEERS", [])
REGISTRY_ARD_FEDERATION_TIMEOUT = env_float("REGISTRY_ARD_FEDERATION_TIMEOUT", 2.0)
# Manifests: at most this many entries are read from one manifest (the rest is a finding).
REGISTRY_ARD_MAX_ENTRIES = env_int("REGISTRY_ARD_MAX_ENTRIES", 500, minimum=1)
REGISTRY_IMPORT_MAX_URLS = env_int("REGISTRY_IMPORT_MAX_URLS", 10000, minimum=1)
# URLs given inline ({"urls": [...]}): bounded by the request body cap (2.5 MB at 2,048 characters
# a URL); longer lists go in a document ({"url": ...}), up to REGISTRY_IMPORT_MAX_URLS.
REGISTRY_IMPORT_INLINE_MAX_URLS = env_int("REGISTRY_IMPORT_INLINE_MAX_URLS", 1000, minimum=1)

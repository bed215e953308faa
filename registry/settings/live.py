"""Live checks (live/, docs/live-checks.md)."""

from __future__ import annotations

from registry.env import env_bool, env_float, env_int

# After a crawl, at most once an interval: the agent's endpoints asked what cannot start work.
REGISTRY_LIVE_CHECKS = env_bool("REGISTRY_LIVE_CHECKS", True)
REGISTRY_LIVE_INTERVAL_SECONDS = env_int("REGISTRY_LIVE_INTERVAL_SECONDS", 6 * 3600, minimum=60)
# The beat's sweep that queues due checks (nothing of them on the crawl's path): how often, and
# at most how many agents a sweep.
REGISTRY_LIVE_SWEEP_SECONDS = env_float("REGISTRY_LIVE_SWEEP_SECONDS", 60.0)
REGISTRY_LIVE_SWEEP_BATCH = env_int("REGISTRY_LIVE_SWEEP_BATCH", 500, minimum=1)
# Each request: connect, read and total bounds, and the largest answer read.
REGISTRY_LIVE_CONNECT_TIMEOUT = env_float("REGISTRY_LIVE_CONNECT_TIMEOUT", 3.0)
REGISTRY_LIVE_READ_TIMEOUT = env_float("REGISTRY_LIVE_READ_TIMEOUT", 5.0)
REGISTRY_LIVE_REQUEST_TIMEOUT = env_float("REGISTRY_LIVE_REQUEST_TIMEOUT", 8.0)
REGISTRY_LIVE_MAX_BYTES = env_int("REGISTRY_LIVE_MAX_BYTES", 256 * 1024, minimum=1024)
# One agent's whole run: checks left when it is spent are skipped, with the reason. Generous:
# every request may first wait its turn at the destination's politeness gate (1 s apart).
REGISTRY_LIVE_RUN_SECONDS = env_float("REGISTRY_LIVE_RUN_SECONDS", 60.0)
# At most this many interfaces are checked an agent (one per origin, binding and version); the
# others are reported as skipped, with the reason.
REGISTRY_LIVE_MAX_INTERFACES = env_int("REGISTRY_LIVE_MAX_INTERFACES", 4, minimum=1)
# Messages (only for agents whose owner opted in): at most this many an agent a UTC day.
REGISTRY_LIVE_MESSAGES_PER_DAY = env_int("REGISTRY_LIVE_MESSAGES_PER_DAY", 6, minimum=0)
# POST /api/v1/agents/{id}/probe: at most once in this many seconds an agent.
REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = env_int(
    "REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS", 60, minimum=0
)

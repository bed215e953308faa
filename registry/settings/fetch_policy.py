"""What the registry may fetch, and how much it may spend on it (DESIGN section 6)."""

from __future__ import annotations

from registry.env import env_bool, env_float, env_int, env_networks, env_ports, env_str

REGISTRY_FETCH_ALLOW_HTTP = env_bool("REGISTRY_FETCH_ALLOW_HTTP", False)
REGISTRY_FETCH_ALLOWED_NETWORKS = env_networks("REGISTRY_FETCH_ALLOWED_NETWORKS")
REGISTRY_FETCH_ALLOWED_PORTS = env_ports("REGISTRY_FETCH_ALLOWED_PORTS", [443])
REGISTRY_FETCH_MAX_BYTES = env_int("REGISTRY_FETCH_MAX_BYTES", 1024 * 1024, minimum=1024)
REGISTRY_FETCH_CONNECT_TIMEOUT = env_float("REGISTRY_FETCH_CONNECT_TIMEOUT", 5.0)
REGISTRY_FETCH_READ_TIMEOUT = env_float("REGISTRY_FETCH_READ_TIMEOUT", 10.0)
REGISTRY_FETCH_TOTAL_TIMEOUT = env_float("REGISTRY_FETCH_TOTAL_TIMEOUT", 20.0)
# CPU seconds one request (validate, schema match, check-message, validate-payload, MCP, A2A) and
# one crawl or import task may spend evaluating JSON Schemas (schemas_app/budget.py).
REGISTRY_SCHEMA_BUDGET_SECONDS = env_float("REGISTRY_SCHEMA_BUDGET_SECONDS", 0.5)
REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS = env_float("REGISTRY_SCHEMA_CRAWL_BUDGET_SECONDS", 3.0)
# One regular-expression match cannot be stopped once started: the longest text the lightest
# look-around pattern is run on; heavier patterns get less (schemas_app/regex_cost.py).
REGISTRY_SCHEMA_REGEX_MAX_INPUT = env_int("REGISTRY_SCHEMA_REGEX_MAX_INPUT", 256, minimum=16)
REGISTRY_USER_AGENT = env_str(
    "REGISTRY_USER_AGENT", "A2A-Card-Registry/0.1 (+https://github.com/a2a-card-registry)"
)

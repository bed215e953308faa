"""Limits per account and per client address, and how a client's address is known."""

from __future__ import annotations

from registry.env import ConfigError, env_int, env_networks, env_str
from registry.rates import Rate

# Submissions (and imports) per account, in DRF's "N/period" form; empty for no limit.
REGISTRY_SUBMISSION_RATE = env_str("REGISTRY_SUBMISSION_RATE", "120/hour")
# Anonymous requests per client address (registry/limits.py); "off" for no limit.
REGISTRY_ANON_RATE = env_str("REGISTRY_ANON_RATE", "600/minute")
# Anonymous POST /api/v1/validate {"url"} per client address: each one makes the registry fetch.
REGISTRY_VALIDATE_URL_ANON_RATE = env_str("REGISTRY_VALIDATE_URL_ANON_RATE", "10/hour")
# Proxies whose X-Forwarded-For is believed (CIDR list); empty: the connection's address only.
REGISTRY_TRUSTED_PROXIES = env_networks("REGISTRY_TRUSTED_PROXIES")
# Per-client limits count an IPv6 client by its network of this many bits (one host usually holds
# a whole /64, one address of it per request if it likes); IPv4 by its address.
REGISTRY_THROTTLE_IPV6_PREFIX = env_int("REGISTRY_THROTTLE_IPV6_PREFIX", 64, minimum=1)
if REGISTRY_THROTTLE_IPV6_PREFIX > 128:
    raise ConfigError(
        f"REGISTRY_THROTTLE_IPV6_PREFIX must be at most 128 (got {REGISTRY_THROTTLE_IPV6_PREFIX})"
    )
for _rate_name in ("REGISTRY_ANON_RATE", "REGISTRY_VALIDATE_URL_ANON_RATE"):
    try:
        Rate.parse(globals()[_rate_name])
    except ValueError as _exc:
        raise ConfigError(f"{_rate_name}: {_exc}") from None

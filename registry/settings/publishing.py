"""Proof of an origin (issue 44) and trusted publishing from CI (issue 45)."""

from __future__ import annotations

from registry.env import ConfigError, env_float, env_int, env_list, env_str
from registry.rates import Rate

# --- Proof of an origin (issue 44; docs/publishers.md, "Proof of an origin") ---------------
# A verified origin is re-checked this often; it lapses after this many failed re-checks in a
# row. The sweep runs every REGISTRY_ORIGIN_RECHECK_SECONDS and re-checks at most BATCH.
REGISTRY_ORIGIN_RECHECK_HOURS = env_float("REGISTRY_ORIGIN_RECHECK_HOURS", 24.0)
REGISTRY_ORIGIN_RECHECK_FAILURES = env_int("REGISTRY_ORIGIN_RECHECK_FAILURES", 3, minimum=1)
REGISTRY_ORIGIN_RECHECK_SECONDS = env_float("REGISTRY_ORIGIN_RECHECK_SECONDS", 300.0)
REGISTRY_ORIGIN_RECHECK_BATCH = env_int("REGISTRY_ORIGIN_RECHECK_BATCH", 50, minimum=1)
# Verify attempts per account (each one makes the registry fetch or query DNS).
REGISTRY_ORIGIN_VERIFY_RATE = env_str("REGISTRY_ORIGIN_VERIFY_RATE", "30/hour")
try:
    Rate.parse(REGISTRY_ORIGIN_VERIFY_RATE)
except ValueError as _exc:
    raise ConfigError(f"REGISTRY_ORIGIN_VERIFY_RATE: {_exc}") from None
REGISTRY_ORIGINS_PER_ACCOUNT = env_int("REGISTRY_ORIGINS_PER_ACCOUNT", 100, minimum=1)
# The DNS method's resolvers, "ip:port,ip:port" ("[::1]:53" for IPv6); empty: the system's.
REGISTRY_DNS_NAMESERVERS: list[tuple[str, int]] = []
for _server in env_list("REGISTRY_DNS_NAMESERVERS", []):
    _host, _, _port = _server.rpartition(":")
    _host = _host.strip("[]")
    if not (_host and set(_host) <= set("0123456789abcdefABCDEF.:") and _port.isdigit()):
        raise ConfigError(f"REGISTRY_DNS_NAMESERVERS: {_server!r} is not ip:port")
    if not 0 < int(_port) < 65536:
        raise ConfigError(f"REGISTRY_DNS_NAMESERVERS: {_port} is not a valid port")
    REGISTRY_DNS_NAMESERVERS.append((_host, int(_port)))
REGISTRY_DNS_TIMEOUT_SECONDS = env_float("REGISTRY_DNS_TIMEOUT_SECONDS", 5.0)
# --- Trusted publishing (issue 45; docs/publishing-from-ci.md, "Trusted publishers") --------
# The OIDC issuers whose CI ID tokens may be exchanged for a publish token, comma-separated.
REGISTRY_TRUSTED_ISSUERS = [
    _issuer.rstrip("/")
    for _issuer in env_list(
        "REGISTRY_TRUSTED_ISSUERS",
        ["https://token.actions.githubusercontent.com", "https://gitlab.com"],
    )
]
# The audience a CI job asks its ID token for (GitHub: getIDToken(audience); GitLab: id_tokens aud).
REGISTRY_TRUSTED_PUBLISHING_AUDIENCE = env_str(
    "REGISTRY_TRUSTED_PUBLISHING_AUDIENCE", "a2a-registry"
)
# How long the publish token an exchange mints lasts.
REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES = env_int(
    "REGISTRY_TRUSTED_PUBLISH_TOKEN_MINUTES", 15, minimum=1
)
# Exchanges per client address (each may make the registry fetch the issuer's keys).
REGISTRY_TRUSTED_EXCHANGE_RATE = env_str("REGISTRY_TRUSTED_EXCHANGE_RATE", "60/hour")
try:
    Rate.parse(REGISTRY_TRUSTED_EXCHANGE_RATE)
except ValueError as _exc:
    raise ConfigError(f"REGISTRY_TRUSTED_EXCHANGE_RATE: {_exc}") from None

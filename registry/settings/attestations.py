"""Attestations (docs/badges-and-attestations.md): the registry's key and the issuer."""

from __future__ import annotations

from pathlib import Path

from registry.env import ConfigError, env_int, env_optional

# The registry's Ed25519 key: PEM text or a file path; unset, one is generated and stored.
REGISTRY_SIGNING_KEY = env_optional("REGISTRY_SIGNING_KEY")
if (
    REGISTRY_SIGNING_KEY is not None
    and "-----BEGIN" not in REGISTRY_SIGNING_KEY
    and not Path(REGISTRY_SIGNING_KEY).is_file()
):
    raise ConfigError("REGISTRY_SIGNING_KEY must be a PEM private key or the path of a PEM file")
# The attestations' issuer; unset, the base URL of the request (scheme and host) is used.
REGISTRY_BASE_URL = (env_optional("REGISTRY_BASE_URL") or "").rstrip("/") or None
if REGISTRY_BASE_URL is not None and not REGISTRY_BASE_URL.startswith(("https://", "http://")):
    raise ConfigError(f"REGISTRY_BASE_URL must be an http(s) URL (got {REGISTRY_BASE_URL!r})")
REGISTRY_ATTESTATION_TTL_SECONDS = env_int("REGISTRY_ATTESTATION_TTL_SECONDS", 3600, minimum=60)

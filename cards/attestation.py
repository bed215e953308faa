"""Signed attestations: what the registry knows about an agent's card, as a compact JWS.

The token is a JWT signed with the registry's Ed25519 key (``cards.signing_keys``), so
anyone can check it offline against ``/.well-known/jwks.json``. It is short-lived: it states
what the registry saw at ``iat``, not a lasting certificate.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
import uuid
from typing import Any

import jwt
import rfc8785
from django.conf import settings

from cards import signing_keys
from cards.models import Agent

TOKEN_TYPE = "JWT"


def card_sha256(data: Any) -> str | None:
    """sha256 (hex) of the RFC 8785 form of the card as served; None when it has none (an
    integer beyond 2^53 or a value JSON cannot hold)."""
    if data is None:
        return None
    try:
        canonical = rfc8785.dumps(data)
    except (rfc8785.CanonicalizationError, ValueError, TypeError, RecursionError):
        return None
    return hashlib.sha256(canonical).hexdigest()


def issuer(request_base_url: str) -> str:
    """``REGISTRY_BASE_URL`` when set, else the base URL the request came to."""
    configured = getattr(settings, "REGISTRY_BASE_URL", None)
    return (configured or request_base_url).rstrip("/")


def _numeric_date(value: dt.datetime | str | None) -> int | None:
    """A time as JWT writes it (RFC 7519 NumericDate: whole seconds since the epoch)."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is None:  # the report's times are UTC; never read one as local time
        value = value.replace(tzinfo=dt.UTC)
    return int(value.timestamp())


def live_claim(agent: Agent) -> dict[str, Any]:
    """What the live checks observed of the agent's own endpoint, and when (docs/live-checks.md
    and docs/badges-and-attestations.md, "Live checks": the shape A2A issue #1934 proposes for
    liveness attestations, where it fits)."""
    report = agent.live if isinstance(agent.live, dict) else {}
    messages = report.get("messages")
    counts = report.get("counts")
    return {
        "outcome": agent.live_outcome or "not-checked",
        "checked_at": _numeric_date(agent.live_checked_at),
        "endpoint": report.get("endpoint") or "not-checked",
        "counts": counts if isinstance(counts, dict) else None,
        "failing_since": _numeric_date(report.get("failing_since")),
        # Whether the owner had opted in to real messages when the run was made: without it,
        # only requests that cannot start work were sent (no SendMessage).
        "probe_messages": bool(isinstance(messages, dict) and messages.get("enabled")),
    }


def attestation_claims(agent: Agent, *, iss: str, now: int | None = None) -> dict[str, Any]:
    """The claims of an agent's attestation. The agent must have a latest snapshot."""
    snapshot = agent.latest_snapshot
    if snapshot is None:
        raise ValueError("an attestation needs a fetched card")
    issued = int(time.time()) if now is None else now
    report = agent.signature or {}
    return {
        "iss": iss,
        "sub": agent.card_url or snapshot.card_url or agent.url,
        "iat": issued,
        "exp": issued + settings.REGISTRY_ATTESTATION_TTL_SECONDS,
        "jti": str(uuid.uuid4()),
        "agent_id": str(agent.pk),
        "card_sha256": card_sha256(snapshot.data),
        "fetched_at": int(snapshot.fetched_at.timestamp()),
        "signature": {
            "status": agent.signature_status or None,
            "thumbprints": list(report.get("thumbprints") or []),
        },
        "validation": {
            "valid": agent.valid,
            "errors": agent.error_count,
            "warnings": agent.warning_count,
            "infos": agent.info_count,
        },
        "health": agent.health,
        # The origin its owner proved (docs/publishers.md), or null: "publisher not verified".
        "verified_publisher": agent.publisher_origin or None,
        "moderation": agent.moderation,
        "live": live_claim(agent),
    }


def sign(claims: dict[str, Any]) -> str:
    """The compact JWS of ``claims``, signed with the registry's active key."""
    key = signing_keys.active_key()
    headers = {"alg": signing_keys.ALGORITHM, "typ": TOKEN_TYPE, "kid": key.kid}
    return jwt.encode(claims, key.private_key, algorithm=signing_keys.ALGORITHM, headers=headers)


def agent_attest(agent: Agent, *, iss: str) -> tuple[str, dict[str, Any]]:
    """(token, claims) attesting the agent's current state."""
    claims = attestation_claims(agent, iss=iss)
    return sign(claims), claims

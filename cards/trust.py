"""Signature state of agents: verifying a fetched card and remembering which keys signed it.

Verification may fetch a JWKS, so it runs before the ingest transaction opens; recording the
outcome (status, report, key continuity, history events) runs inside it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cards.models import Agent, AgentEvent, AgentKey, PinnedKey, Snapshot
from cards.parsing import ParsedDocument
from cards.pipeline.verify import verify
from cards.signatures import SignatureReport


def pinned_jwks(agent_id: Any) -> dict[str, Any] | None:
    """All keys curators pinned for the agent, as one JWKS document (None when there are none)."""
    keys: list[Any] = []
    for jwks in PinnedKey.objects.filter(agent_id=agent_id).values_list("jwks", flat=True):
        if isinstance(jwks, dict) and isinstance(jwks.get("keys"), list):
            keys.extend(jwks["keys"])
    return {"keys": keys} if keys else None


def signature_check(
    parsed: ParsedDocument, *, card_url: str, agent_id: Any = None
) -> SignatureReport | None:
    """The pipeline's verify step with the keys curators pinned for the agent (a database
    read, which is why this is here and not in the pipeline)."""
    pinned = pinned_jwks(agent_id) if agent_id is not None else None
    return verify(parsed, card_url=card_url, pinned_jwks=pinned)


def _verified_keys(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    bound = set(report.get("thumbprints") or [])
    keys: dict[str, dict[str, Any]] = {}
    for outcome in report.get("signatures") or []:
        thumbprint = outcome.get("thumbprint")
        if outcome.get("result") == "verified" and thumbprint in bound:
            keys[thumbprint] = outcome
    return keys


def adds_keys(report: SignatureReport | None) -> bool:
    """Whether recording ``report`` gives the agent keys (a signature verified by a bound key)."""
    return report is not None and bool(_verified_keys(report.as_dict()))


def record_signature(
    agent: Agent, report: SignatureReport | None, *, snapshot: Snapshot | None, now: datetime
) -> None:
    """Store the report on the agent (not saved here) and track key continuity and history."""
    if report is None:
        return
    as_dict = report.as_dict()
    previous_status = agent.signature_status
    agent.signature_status = report.status
    agent.signature = as_dict
    if snapshot is not None and snapshot.signature != as_dict:
        snapshot.signature = as_dict
        snapshot.save(update_fields=["signature"])
    if previous_status and previous_status != report.status:
        AgentEvent.objects.create(
            agent=agent,
            snapshot=snapshot,
            kind=AgentEvent.Kind.SIGNATURE_STATUS_CHANGED,
            detail={"from": previous_status, "to": report.status},
        )
    keys = _verified_keys(as_dict)
    if not keys:
        return
    current_before = set(
        AgentKey.objects.filter(agent=agent, current=True).values_list("thumbprint", flat=True)
    )
    for thumbprint, outcome in keys.items():
        AgentKey.objects.update_or_create(
            agent=agent,
            thumbprint=thumbprint,
            defaults={
                "last_seen_at": now,
                "current": True,
                "key_source": (outcome.get("key_source") or "")[:16],
                "key_url": (outcome.get("key_url") or "")[:2048],
            },
            create_defaults={
                "first_seen_at": now,
                "last_seen_at": now,
                "current": True,
                "key_source": (outcome.get("key_source") or "")[:16],
                "key_url": (outcome.get("key_url") or "")[:2048],
            },
        )
    AgentKey.objects.filter(agent=agent, current=True).exclude(thumbprint__in=list(keys)).update(
        current=False
    )
    if current_before and current_before != set(keys):
        AgentEvent.objects.create(
            agent=agent,
            snapshot=snapshot,
            kind=AgentEvent.Kind.SIGNING_KEY_CHANGED,
            detail={"previous": sorted(current_before), "current": sorted(keys)},
        )

"""Agents as ARD entries: the projection search and list return, and the full entry."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cards.models import Agent
from cards.rendering import bounds
from protocols.ard.filters import A2A_TYPE

# What a projection needs from an agent row (one query per page, no joins).
COLUMNS = (
    "id",
    "ard_identifier",
    "name",
    "description",
    "url",
    "card_url",
    "version",
    "tags",
    "capabilities",
    "ard_entry",
    "signature_status",
    "publisher_origin",
    "health",
    "live_outcome",
    "live_checked_at",
    "updated_at",
)


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _artifact_url(agent: Agent, base: str) -> str:
    if (agent.ard_entry or {}).get("inline"):
        # An inline card (an entry's ``data``): the registry serves the exact bytes.
        return f"{base}/api/v1/agents/{agent.pk}/card"
    return agent.card_url or agent.url


def projection(agent: Agent, *, base: str, source: str) -> dict[str, Any]:
    """A search or list result: what helps choose among agents (ARD 5.3.2)."""
    entry = agent.ard_entry or {}
    out: dict[str, Any] = {
        "identifier": agent.ard_identifier,
        "displayName": agent.name or entry.get("displayName") or agent.ard_identifier,
        "type": A2A_TYPE,
        "url": _artifact_url(agent, base),
    }
    description = agent.description or entry.get("description")
    if description:
        out["description"] = bounds.clip(description, bounds.ARD_DESCRIPTION)
    if agent.tags:
        # The first tags (a card may have thousands); metadata.tagsTotal counts them all.
        out["tags"] = list(agent.tags[: bounds.ARD_TAGS])
    if agent.capabilities:
        out["capabilities"] = list(agent.capabilities)
    if agent.version:
        out["version"] = agent.version
    out["updatedAt"] = _iso(agent.updated_at)
    # ai-catalog metadata values are scalars: the A2A facts no other ARD registry has, and
    # what the registry's live checks of the agent's own endpoint found (docs/live-checks.md).
    out["metadata"] = {
        "registryId": str(agent.pk),
        "registryUrl": f"{base}/api/v1/agents/{agent.pk}",
        "signature": agent.signature_status or "unknown",
        # "Verified publisher": the origin its owner proved (docs/publishers.md), or absent.
        **({"verifiedPublisher": agent.publisher_origin} if agent.publisher_origin else {}),
        "health": agent.health,
        "liveOutcome": agent.live_outcome or "not-checked",
        "liveCheckedAt": _iso(agent.live_checked_at),
    }
    if len(agent.tags or []) > bounds.ARD_TAGS:
        out["metadata"]["tagsTotal"] = len(agent.tags)
    out["source"] = source
    return out


def full(agent: Agent, *, base: str, source: str) -> dict[str, Any]:
    """The complete entry (GET /agents/{identifier}): the projection plus the discovery terms
    the manifest gave (representative queries, trust manifest)."""
    out = projection(agent, base=base, source=source)
    entry = agent.ard_entry or {}
    if "description" in out:  # the whole description (ingest keeps 20,000 characters)
        full_text = agent.description or entry.get("description")
        out["description"] = bounds.clip(full_text, bounds.DESCRIPTION)
    if entry.get("representativeQueries"):
        queries = bounds.strings(entry["representativeQueries"], bounds.ARD_QUERIES, bounds.TEXT)
        out["representativeQueries"] = queries
    if entry.get("trustManifest") is not None:
        out["trustManifest"] = entry["trustManifest"]
    return out

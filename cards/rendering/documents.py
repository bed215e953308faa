"""Build an agent's summary and detail as plain dicts, from rows already loaded.

These are the documents :mod:`cards.rendering.store` stores. They are built by hand rather than
by DRF serializers (a tenth of the cost); :mod:`cards.rendering.shapes` declares the same shapes
for the OpenAPI document, and ``tests/api/test_openapi_responses.py`` checks real responses
against it, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.urls import reverse

from cards import badges
from cards.models import Agent, AgentKey, Extension, Skill
from cards.rendering import bounds
from cards.rendering.bounds import bounded, clip, strings

# Stands for the registry's base URL in stored documents (".invalid" can never be a real host);
# the read side puts the real one in when it serves them.
# An agent's uptime: the shares of successful crawl attempts over 7 and over 30 days.
Uptime = tuple[float | None, float | None]

BASE = "https://base.registry.invalid"
_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"
_LINK_ROUTES = {
    "self": "agent-detail",
    "card": "agent-card",
    "history": "agent-history",
    "schemas": "agent-schemas",
    "attestation": "agent-attestation",
    "page": "catalogue-agent",
    "badge": "badge",
    # The whole lists a document shows the first items of (cards.rendering.bounds).
    "skills": "agent-skills",
    "interfaces": "agent-interfaces",
    "live_checks": "agent-live-checks",
}
_templates: dict[str, str] = {}


def when(value: dt.datetime | None) -> str | None:
    """A time as DRF writes it: ISO 8601 in UTC with a ``Z``."""
    if value is None:
        return None
    text = value.astimezone(dt.UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def links(agent_id: Any) -> dict[str, str]:
    if not _templates:  # reverse() once per process, not per agent
        for name, route in _LINK_ROUTES.items():
            _templates[name] = BASE + reverse(route, args=[_PLACEHOLDER])
    ident = str(agent_id)
    return {name: template.replace(_PLACEHOLDER, ident) for name, template in _templates.items()}


def _provider(agent: Agent) -> dict[str, str] | None:
    if not agent.provider_organization and not agent.provider_url:
        return None
    return {"organization": agent.provider_organization, "url": agent.provider_url}


def publisher_section(agent: Agent) -> dict[str, Any]:
    """Whether the agent's owner proved its card's origin (issue 44): "Verified publisher:
    ``name``" where ``verified``; ``origin`` is the proven origin, ``name`` its host[:port]."""
    origin = agent.publisher_origin or None
    return {
        "verified": origin is not None,
        "origin": origin,
        "name": origin.split("://", 1)[-1] if origin else None,
    }


def _validation(agent: Agent) -> dict[str, Any]:
    return {
        "valid": agent.valid,
        "counts": {
            "error": agent.error_count,
            "warning": agent.warning_count,
            "info": agent.info_count,
        },
    }


def health_section(agent: Agent, uptime: Uptime, endpoint: str | None = None) -> dict[str, Any]:
    """The card URL's health (``state``, uptime) and, from the live checks, whether the agent's
    own endpoint answers (``endpoint``: answers, not-a2a, unreachable, not-checked; a caller
    that did not read ``live`` passes the one it knows)."""
    if endpoint is None:
        endpoint = (agent.live or {}).get("endpoint") or "not-checked"
    return {
        "state": agent.health,
        "endpoint": endpoint,
        "consecutive_failures": agent.consecutive_failures,
        "gone_since": when(agent.gone_since),
        "last_success_at": when(agent.last_success_at),
        "uptime_7d": uptime[0],
        "uptime_30d": uptime[1],
    }


def crawl_section(agent: Agent) -> dict[str, Any]:
    """What the crawler observed; null (never "") where nothing was observed yet."""
    return {
        "status": agent.status,
        "last_error": agent.last_error or None,
        "last_error_code": agent.last_error_code or None,
        "last_crawled_at": when(agent.last_crawled_at),
        "last_success_at": when(agent.last_success_at),
        "last_http_status": agent.last_http_status,
        "fetch_ms": agent.fetch_ms,
        "process_ms": agent.process_ms,
        "next_crawl_at": when(agent.next_crawl_at),
    }


def ard_section(agent: Agent) -> dict[str, Any]:
    """The agent as ARD sees it: its identifier and, when a manifest lists it, the entry's
    discovery terms (the first of each: :mod:`cards.rendering.bounds`)."""
    entry = agent.ard_entry or {}
    return {
        "identifier": agent.ard_identifier,
        "identifier_source": agent.ard_identifier_source or None,
        "manifest_url": entry.get("manifestUrl"),
        "listed": agent.manifest_listed,
        "representative_queries": strings(
            entry.get("representativeQueries"), bounds.ARD_QUERIES, bounds.TEXT
        ),
        "capabilities": list(agent.capabilities or []),
        "tags": strings(entry.get("tags"), bounds.ARD_TAGS, bounds.TAG),
        "trust_manifest": entry.get("trustManifest"),
    }


NOT_CHECKED = "not-checked"


def live_outcome(agent: Agent) -> dict[str, Any]:
    """The live checks' verdict as a list row and the ARD and protocol answers carry it."""
    report = agent.live or {}
    return {
        "outcome": agent.live_outcome or NOT_CHECKED,
        "checked_at": when(agent.live_checked_at),
        "counts": report.get("counts"),
    }


def live_section(agent: Agent) -> dict[str, Any]:
    """The report of the last live run (docs/live-checks.md) with its first check rows
    (``checks_total`` counts them all; ``links.live_checks`` lists them), and the opt-in."""
    report = agent.live or {}
    checks = report.get("checks")
    checks = checks if isinstance(checks, list) else []
    return {
        **live_outcome(agent),
        "endpoint": report.get("endpoint") or NOT_CHECKED,
        "failing_since": report.get("failing_since"),
        "probe_messages": agent.probe_messages,
        **bounded("checks", checks, count=bounds.DETAIL_CHECKS, budget=bounds.CHECKS_BYTES),
    }


def moderation_section(state: str, reason: str | None) -> dict[str, Any]:
    """``{state, reason}``, the same shape in a list row and a detail: the reason is a string
    only for the owner and staff reading a detail, and only when there is one; null otherwise."""
    return {"state": state, "reason": reason or None}


def skill_brief(skill: Skill) -> dict[str, Any]:
    """A skill in a list row: id, name and its first tags."""
    return {
        "id": skill.skill_id,
        "name": skill.name,
        "tags": strings(skill.tags, bounds.SUMMARY_TAGS, bounds.TAG),
    }


def skill_document(skill: Skill) -> dict[str, Any]:
    """A skill as the detail and ``/api/v1/agents/{id}/skills`` show it (strings and lists
    bounded: :mod:`cards.rendering.bounds`)."""
    return {
        "id": skill.skill_id,
        "name": skill.name,
        "description": clip(skill.description, bounds.SKILL_DESCRIPTION),
        "tags": strings(skill.tags, bounds.SKILL_TAGS, bounds.TAG),
        "examples": strings(skill.examples, bounds.SKILL_EXAMPLES, bounds.TEXT),
        "input_modes": strings(skill.input_modes, bounds.SKILL_MODES, bounds.WORD),
        "output_modes": strings(skill.output_modes, bounds.SKILL_MODES, bounds.WORD),
    }


def extension_document(extension: Extension) -> dict[str, Any]:
    return {
        "uri": extension.uri,
        "description": clip(extension.description, bounds.EXTENSION_DESCRIPTION),
        "required": extension.required,
        "params": extension.params,
    }


def summary(agent: Agent, skills: list[Skill], uptime: Uptime = (None, None)) -> dict[str, Any]:
    """One row of a search result: the fields it shares with the detail have the detail's shape
    (``moderation``, ``health`` and ``crawl`` objects; a null ``signature_status`` until one was
    checked). See docs/api.md ("One shape per field"). Its description and skills are the first
    ones (``skills_total`` counts them all; the detail has more)."""
    return {
        "id": str(agent.pk),
        "ard_identifier": agent.ard_identifier,
        "url": agent.url,
        "card_url": agent.card_url,
        "name": agent.name,
        "description": clip(agent.description, bounds.SUMMARY_DESCRIPTION),
        "version": agent.version,
        "provider": _provider(agent),
        "shape": agent.shape,
        "status": agent.status,
        "moderation": moderation_section(agent.moderation, None),
        "health": health_section(agent, uptime),
        "crawl": crawl_section(agent),
        "signature_status": agent.signature_status or None,
        "publisher": publisher_section(agent),
        "live": live_outcome(agent),
        "streaming": agent.streaming,
        **bounded(
            "skills",
            skills,
            count=bounds.SUMMARY_SKILLS,
            budget=bounds.SUMMARY_SKILLS_BYTES,
            shape=skill_brief,
        ),
        "validation": _validation(agent),
        "last_crawled_at": when(agent.last_crawled_at),
        "created_at": when(agent.created_at),
        "links": links(agent.pk),
    }


def detail(
    agent: Agent,
    skills: list[Skill],
    extensions: list[Extension],
    keys: list[AgentKey],
    uptime: Uptime,
) -> dict[str, Any]:
    """The public detail (the reader-dependent ``moderation`` and ``owned`` are added at read).
    Each long list carries its first items and its total (``skills_total``, ...); the rest is
    at the detail's ``links`` (:mod:`cards.rendering.bounds`)."""
    signature: dict[str, Any] = {
        "status": agent.signature_status or None,
        "form": None,
        "covered_fields": [],
        "uncovered_fields": [],
        "signatures": [],
        "thumbprints": [],
    }
    signature.update(agent.signature or {})
    for name in ("signatures", "thumbprints", "covered_fields", "uncovered_fields"):
        listed = signature.get(name)
        if isinstance(listed, list) and len(listed) > bounds.DETAIL_SIGNATURES:
            signature[name] = listed[: bounds.DETAIL_SIGNATURES]
            signature[f"{name}_total"] = len(listed)
    signature["keys_total"] = len(keys)
    signature["keys"] = [
        {
            "thumbprint": key.thumbprint,
            "key_source": key.key_source,
            "key_url": key.key_url,
            "first_seen_at": when(key.first_seen_at),
            "last_seen_at": when(key.last_seen_at),
            "current": key.current,
        }
        for key in keys[: bounds.DETAIL_KEYS]
    ]
    findings = agent.findings if isinstance(agent.findings, list) else []
    validation = _validation(agent)
    validation.update(
        bounded("findings", findings, count=bounds.DETAIL_FINDINGS, budget=bounds.FINDINGS_BYTES)
    )
    interfaces = agent.interfaces if isinstance(agent.interfaces, list) else []
    return {
        "id": str(agent.pk),
        "ard_identifier": agent.ard_identifier,
        "url": agent.url,
        "card_url": agent.card_url,
        "name": agent.name,
        "description": agent.description,
        "version": agent.version,
        "provider": _provider(agent),
        "shape": agent.shape,
        "documentation_url": agent.documentation_url,
        "icon_url": agent.icon_url,
        "interfaces": interfaces[: bounds.DETAIL_INTERFACES],
        "interfaces_total": len(interfaces),
        "capabilities": {
            "streaming": agent.streaming,
            "pushNotifications": agent.push_notifications,
            "extendedAgentCard": agent.extended_card,
        },
        "status": agent.status,
        "health": health_section(agent, uptime),
        "crawl": crawl_section(agent),
        "content_sha256": agent.content_sha256,
        "signature": signature,
        "publisher": publisher_section(agent),
        "live": live_section(agent),
        "validation": validation,
        **bounded(
            "skills",
            skills,
            count=bounds.DETAIL_SKILLS,
            budget=bounds.SKILLS_BYTES,
            shape=skill_document,
        ),
        **bounded(
            "extensions",
            extensions,
            count=bounds.DETAIL_EXTENSIONS,
            budget=bounds.EXTENSIONS_BYTES,
            shape=extension_document,
        ),
        "ard": ard_section(agent),
        "embed": badges.embed_snippets(agent, BASE),
        "created_at": when(agent.created_at),
        "updated_at": when(agent.updated_at),
        "links": links(agent.pk),
    }

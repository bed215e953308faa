"""Curation and ownership: moderation states, soft deletion, and the audit log of every action."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from cards.models import Agent, AuditEntry


def can_manage(user: Any, agent: Agent) -> bool:
    """The owner (whose token submitted the agent) and staff may manage it; nobody else."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff) or (
        agent.submitted_by_id is not None and agent.submitted_by_id == user.pk
    )


def audit(*, actor: Any, agent: Agent | None, action: str, reason: str = "", **detail: Any) -> None:
    AuditEntry.objects.create(
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        agent=agent,
        action=action,
        reason=reason,
        detail=detail,
    )


def agent_moderate(*, agent: Agent, state: str, actor: Any, reason: str = "") -> Agent:
    """Move an agent to a moderation state; rejecting needs a reason the submitter will see."""
    if state not in Agent.Moderation.values:
        raise ValueError(f"unknown moderation state {state!r}")
    if state == Agent.Moderation.REJECTED and not reason.strip():
        raise ValueError("a rejection needs a reason")
    with transaction.atomic():
        previous = agent.moderation
        agent.moderation = state
        if state in (Agent.Moderation.REJECTED, Agent.Moderation.HIDDEN) or reason:
            agent.moderation_reason = reason.strip()
        elif state in Agent.PUBLIC_STATES:
            agent.moderation_reason = ""
        agent.save(update_fields=["moderation", "moderation_reason", "updated_at"])
        audit(actor=actor, agent=agent, action=state, reason=reason, previous=previous)
    return agent


def agent_delete(*, agent: Agent, actor: Any) -> None:
    """Soft delete: gone from search and pages, kept (with its history) for the record."""
    with transaction.atomic():
        agent.deleted_at = timezone.now()
        agent.next_crawl_at = None
        agent.save(update_fields=["deleted_at", "next_crawl_at", "updated_at"])
        audit(actor=actor, agent=agent, action="delete")


def agent_restore(*, agent: Agent, actor: Any) -> None:
    """Undo a soft delete; the agent keeps its owner (whoever restores it)."""
    with transaction.atomic():
        agent.deleted_at = None
        agent.next_crawl_at = timezone.now()
        agent.save(update_fields=["deleted_at", "next_crawl_at", "updated_at"])
        audit(actor=actor, agent=agent, action="restore")


def agent_probe_messages(*, agent: Agent, enabled: bool, actor: Any) -> Agent:
    """Opt the agent in to (or out of) live checks that send it real messages
    (docs/live-checks.md): only its owner or staff may, and the change is audited."""
    with transaction.atomic():
        previous = agent.probe_messages
        agent.probe_messages = enabled
        agent.save(update_fields=["probe_messages", "updated_at"])
        audit(
            actor=actor,
            agent=agent,
            action="probe-messages-on" if enabled else "probe-messages-off",
            previous=previous,
        )
    return agent

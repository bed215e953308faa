"""Where a run's report is kept: on the agent row, with the live parts of its stored public
documents brought up to date in the same UPDATE (a full rendering only for documents of an
older format)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cards.models import Agent
from cards.rendering.partial_updates import LIVE_STATE, live_documents
from cards.rendering.store import agent_changed


def previous(agent_id: Any) -> dict[str, Any]:
    """The report stored last (``{}`` before the first run)."""
    row = Agent.objects.filter(pk=agent_id).values_list("live", flat=True).first()
    return row if isinstance(row, dict) else {}


def take_message(agent_id: Any) -> bool:
    """Count one message against the agent's day (``REGISTRY_LIVE_MESSAGES_PER_DAY``) under
    its row lock, before it is sent; False, and nothing counted, when the day's are spent. Every
    sender takes each message here, the live checks' runs and "Try it" alike, so two of them
    at once never pass the limit between them."""
    today = timezone.now().date().isoformat()
    with transaction.atomic():
        row = Agent.objects.select_for_update().only("id", "live").filter(pk=agent_id).first()
        if row is None:
            return False
        live = dict(row.live or {})
        messages = dict(live.get("messages") or {})
        sent = int(messages.get("sent", 0)) if messages.get("day") == today else 0
        if sent >= settings.REGISTRY_LIVE_MESSAGES_PER_DAY:
            return False
        # Keep "last_run_day": a message is not a run of the checks.
        messages.update({"day": today, "sent": sent + 1})
        live["messages"] = messages
        Agent.objects.filter(pk=agent_id).update(live=live)
    return True


def messages_now(stored: Any, reported: dict[str, Any], today: str) -> dict[str, Any]:
    """The run's ``messages`` entry with the day's count as the row has it now: every message
    was counted there as it was sent (:func:`take_message`), the run's own and a "Try it" send
    made while the run went on, so the row's count is the day's."""
    out = dict(reported)
    current = (stored or {}).get("messages") if isinstance(stored, dict) else None
    current = current if isinstance(current, dict) else {}
    counted = int(current.get("sent", 0) or 0) if current.get("day") == today else 0
    if counted or out.get("day") == today:
        out.update({"day": today, "sent": counted})
    return out


def record(agent_id: Any, report: dict[str, Any], checked_at: Any) -> dict[str, Any]:
    """Store ``report`` and return it as stored: its ``messages`` count read under the row lock
    (:func:`messages_now`)."""
    with transaction.atomic():
        agent = (
            Agent.objects.select_for_update().only(*LIVE_STATE, "live").filter(pk=agent_id).first()
        )
        if agent is None:
            return report
        if isinstance(report.get("messages"), dict):
            today = checked_at.date().isoformat()
            merged = messages_now(agent.live, report["messages"], today)
            report = {**report, "messages": merged}
        values: dict[str, Any] = {
            "live": report,
            "live_outcome": report["outcome"],
            "live_checked_at": checked_at,
            # Mirrors following updated_since see a new outcome.
            "updated_at": timezone.now(),
        }
        for name, value in values.items():
            setattr(agent, name, value)
        documents = live_documents(agent)
        Agent.objects.filter(pk=agent_id).update(**values, **(documents or {}))
        if documents is None:
            agent_changed(agent_id)
    return report

"""Where a run's report is kept: on the agent row, with the live parts of its stored public
documents brought up to date in the same UPDATE (a full rendering only for documents of an
older format)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from cards.models import Agent
from cards.rendering.store import LIVE_STATE, agent_changed, live_documents


def previous(agent_id: Any) -> dict[str, Any]:
    """The report stored last (``{}`` before the first run)."""
    row = Agent.objects.filter(pk=agent_id).values_list("live", flat=True).first()
    return row if isinstance(row, dict) else {}


def record(agent_id: Any, report: dict[str, Any], checked_at: Any) -> None:
    with transaction.atomic():
        agent = Agent.objects.select_for_update().only(*LIVE_STATE).filter(pk=agent_id).first()
        if agent is None:
            return
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

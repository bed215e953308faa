"""The day's message count survives a "Try it" send made while a live-check run is going on:
the run read the agent row before the send, and stores its report after it (live/store.py
merges the count under the row lock instead of writing the run's stale figure)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from cards.models import Agent
from live import runner
from live.store import messages_now, take_message
from tests.factories import agent_from_card, minimal_card
from tests.live.agents import sdk_agent
from tests.live.test_live_checks import account, ingest, live_settings
from tests.publishers.granted import grant_endpoints

__all__ = ["live_settings"]  # the fixture, imported to be used here

pytestmark = pytest.mark.django_db


def today() -> str:
    return timezone.now().date().isoformat()


def test_a_send_during_a_run_without_messages_stays_counted() -> None:
    # No interface and no card URL: the run sends nothing and fetches nothing.
    agent = agent_from_card(minimal_card(name="Quiet", supportedInterfaces=[]))
    Agent.objects.filter(pk=agent.pk).update(card_url="", probe_messages=True)
    started = runner.target(agent.pk)  # the row as the run reads it when it starts
    assert started is not None
    assert take_message(agent.pk)  # the Try it send, while the run goes on
    report = runner.check_agent(started)
    stored = Agent.objects.get(pk=agent.pk).live
    assert stored["messages"]["sent"] == 1 and stored["messages"]["day"] == today()
    assert report["messages"] == stored["messages"]  # what the run returns is what it stored


def test_a_send_during_a_run_with_messages_adds_to_the_runs_own(live_settings: Any) -> None:
    owner, _client = account("alice")
    with sdk_agent() as running:
        row = ingest(running, owner)
        Agent.objects.filter(pk=row.pk).update(probe_messages=True)
        grant_endpoints(row)  # its owner proved the origins it reaches (issue 44)
        started = runner.target(row.pk)
        assert started is not None
        assert take_message(row.pk)
        runner.check_agent(started, force=True)
        run_sent = running.sends
    assert run_sent == 3  # valid, invalid, text: the run's own messages
    assert Agent.objects.get(pk=row.pk).live["messages"]["sent"] == 1 + run_sent


def test_the_merge_keeps_other_days_and_the_runs_other_members() -> None:
    day = today()
    reported = {"enabled": True, "last_run_day": day, "day": day, "sent": 3}
    # The row counted 5 today by now (the run's 3 as it sent them, 2 Try it sends): 5.
    merged = messages_now({"messages": {"day": day, "sent": 5}}, reported, day)
    assert merged == {"enabled": True, "last_run_day": day, "day": day, "sent": 5}
    # Yesterday's count is not today's.
    old = messages_now({"messages": {"day": "2000-01-01", "sent": 9}}, reported, day)
    assert old["sent"] == 0
    # A run that sent nothing, on a day nothing was sent: the entry as the run made it.
    quiet = {"enabled": False, "day": "2000-01-01", "sent": 4}
    assert messages_now({}, quiet, day) == quiet


def test_sends_during_a_run_leave_the_run_only_what_is_left_of_the_day(
    live_settings: Any, settings: Any
) -> None:
    """Each message of a run is counted on the row as it goes (live/store.py take_message), so
    "Try it" sends made after the run read the row shorten the run instead of passing the
    day's limit between them."""
    settings.REGISTRY_LIVE_MESSAGES_PER_DAY = 3
    owner, _client = account("alice")
    with sdk_agent() as running:
        row = ingest(running, owner)
        Agent.objects.filter(pk=row.pk).update(probe_messages=True)
        grant_endpoints(row)  # its owner proved the origins it reaches (issue 44)
        started = runner.target(row.pk)  # nothing sent today when the run reads the row
        assert started is not None
        assert take_message(row.pk) and take_message(row.pk)  # two Try it sends meanwhile
        report = runner.check_agent(started, force=True)
        run_sent = running.sends
    assert run_sent == 1  # the run would send 3 (valid, invalid, text): 1 was left
    assert Agent.objects.get(pk=row.pk).live["messages"]["sent"] == 3
    skipped = [c for c in report["checks"] if "day's limit of 3 messages" in c.get("detail", "")]
    assert len(skipped) == 2

"""One agent's live checks: its interfaces (at most a few: live/selection.py), the card's cache
headers as the crawl read them (live/card_cache.py), and (opted in) messages."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.conf import settings
from django.utils import timezone

from cards.models import Agent
from cards.rendering.documents import when
from live import message_checks, proofs, selection, store, transport_checks
from live.card_cache import card_cache_checks
from live.interfaces import interfaces_of, requires_auth
from live.report import (
    ANSWERS,
    NOT_A2A,
    UNREACHABLE,
    Run,
    counts,
    since_of,
)
from registry import metrics
from schemas_app.payloads import DeclaredSchemas

_ENDPOINT_ORDER = (ANSWERS, NOT_A2A, UNREACHABLE)


def _endpoint(states: list[str]) -> str:
    """The best any interface did: one that answers A2A makes the agent reachable."""
    for state in _ENDPOINT_ORDER:
        if state in states:
            return state
    return "not-checked"


def _no_messages(endpoint: str, *, auth: bool, due: bool) -> str | None:
    """Why an opted-in agent is sent no message this run, or None."""
    if auth:
        return "the card requires authentication; the registry sends no credentials"
    if endpoint != ANSWERS:
        return f"no interface answered A2A (endpoint: {endpoint})"
    if not due:
        return (
            "the day's messages went with its first run; the next go with the first run of "
            "the next UTC day, or with the owner's probe"
        )
    return None


def _messages_due(agent: Agent, today: str, force: bool) -> bool:
    last = (agent.live or {}).get("messages") or {}
    return force or last.get("last_run_day") != today


def check_agent(agent: Agent, *, force: bool = False) -> dict[str, Any]:
    """Run every check the agent qualifies for, store the report, and return it."""
    now = timezone.now()
    today = now.date().isoformat()
    seconds = settings.REGISTRY_LIVE_RUN_SECONDS
    clock = transport_checks.Clock(deadline=time.monotonic() + seconds, seconds=seconds)
    snapshot = agent.latest_snapshot
    card = snapshot.card if snapshot is not None and isinstance(snapshot.card, dict) else None
    run = Run()
    interfaces = interfaces_of(card, agent.shape) if card else []
    chosen = selection.select(interfaces)
    states: list[str] = []
    auth = bool(card) and requires_auth(card or {})
    if card is None:
        run.add(selection.row("no card stored yet", None))
    elif not interfaces:
        run.add(selection.row("the card declares no interface", None))
    elif auth:
        reason = (
            "the card requires authentication (securityRequirements); the registry has no "
            "credentials and sends none"
        )
        run.checks.extend(selection.all_skipped(interfaces, reason))
    else:
        urls = Counter(interface.url for interface in chosen.checked)
        for interface in chosen.checked:
            if clock.spent():
                run.add(selection.row(f"not sent: the run's {seconds:g} s are spent", interface))
                continue
            checks, state = transport_checks.interface_checks(interface, clock)
            if urls[interface.url] > 1:  # one URL in two versions: rows name the version
                for item in checks:
                    item.interface = interface.versioned()
            run.checks.extend(checks)
            states.append(state)
        run.checks.extend(selection.skip_rows(chosen.skipped))
        equivalence = transport_checks.binding_equivalence(run.checks, chosen.checked)
        if equivalence is not None:
            run.add(equivalence)
    if card is not None:
        # From the crawl's own answer: the run sends the card URL nothing.
        run.checks.extend(card_cache_checks(agent))
    run.endpoint = _endpoint(states)
    messages = dict((agent.live or {}).get("messages") or {})
    if agent.probe_messages and card is not None:
        why = _no_messages(run.endpoint, auth=auth, due=_messages_due(agent, today, force))
        lacking = proofs.missing(agent) if why is None else []
        if lacking:  # a proof lapsed, or the agent moved, since the opt-in (issue 44)
            why = "the owner holds no verified proof of " + ", ".join(lacking)
        if why is not None:
            run.add(message_checks.not_sent(why))
        else:
            allowance = message_checks.Allowance(agent.pk)
            run.checks.extend(
                message_checks.run(
                    card=card,
                    skills=list(agent.skills.order_by("position")),
                    declared=DeclaredSchemas.of(agent),
                    interfaces=chosen.checked,
                    allowance=allowance,
                )
            )
            # Each message was counted on the row as it was sent: record() reads the day's count.
            messages = {"day": today, "sent": allowance.sent, "last_run_day": today}
    messages["enabled"] = agent.probe_messages
    stamp = when(now) or ""
    rows = since_of([c.as_dict() for c in run.checks], agent.live or {}, stamp)
    report = {
        "checked_at": stamp,
        "outcome": run.outcome(),
        "endpoint": run.endpoint,
        "counts": counts(rows),
        "checks": rows,
        "messages": messages,
        "failing_since": _failing_since(rows),
    }
    # Stored with the day's message count as the row has it then (a "Try it" send may have
    # been counted during the run): that is the report returned too.
    report = store.record(agent.pk, report, now)
    _count(run)
    return report


def _count(run: Run) -> None:
    """The run in the metrics: each check by id and outcome, and the agent's overall outcome."""
    for item in run.checks:
        metrics.LIVE_CHECKS.labels(check=item.id, outcome=item.outcome).inc()
    metrics.LIVE_RUNS.labels(outcome=run.outcome()).inc()


def _failing_since(checks: list[dict[str, Any]]) -> str | None:
    """The earliest ``since`` of the checks failing now: how long the agent has been failing."""
    times = [c["since"] for c in checks if c["outcome"] == "fail"]
    return min(times) if times else None


def target(agent_id: Any) -> Agent | None:
    """The agent and its card in the v1.0 shape; not the raw bytes, the document as served, the
    stored documents or the findings (a run reads none of them)."""
    return (
        Agent.objects.select_related("latest_snapshot")
        .defer(*_UNREAD)
        .filter(pk=agent_id, deleted_at__isnull=True)
        .first()
    )


_UNREAD = (
    "summary_doc",
    "detail_doc",
    "findings",
    "search_text",
    "latest_snapshot__raw",
    "latest_snapshot__data",
    "latest_snapshot__findings",
    "latest_snapshot__changes",
)

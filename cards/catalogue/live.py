"""What the agent page shows of the live checks (docs/live-checks.md, docs/catalogue.md).

The report is the one the API detail carries (:func:`cards.rendering.documents.live_section`):
its head (outcome, counts, endpoint) read with the agent row, and one page of its rows
(``?checks_page=``, :mod:`cards.reads.parts`), so a report of thousands of rows costs a page.
Times in the report are ISO 8601 strings; they are parsed here so the template formats them as
every other time on the page.
Everything else is passed as text and left to the template's autoescaping: an excerpt is what
an agent answered, so it is hostile until shown escaped.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.dateparse import parse_datetime

from cards import moderation
from cards.models import Agent
from cards.rendering.documents import NOT_CHECKED

# What the endpoint did, in the words of the health row.
ENDPOINT_WORDS = {
    "answers": "answers A2A",
    "not-a2a": "answers, but not A2A",
    "unreachable": "unreachable",
    "not-checked": "not checked yet",
}
# A run happened but no answer could be judged (the card requires credentials, only gRPC, every
# answer too slow or too large for the registry): "not checked yet" would say no run happened.
NOT_JUDGED_WORDS = "not judged: see the live checks"
# The CSS class of each outcome's chip (base.html: .state.good / .bad / .warn).
OUTCOME_CLASS = {"pass": "good", "fail": "bad", "warn": "warn", "skip": ""}
ENDPOINT_CLASS = {"answers": "good", "not-a2a": "bad", "unreachable": "bad"}


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_datetime(value)
    except ValueError:
        return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _exchange(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    status = value.get("status")
    return {
        "request": _text(value.get("request")),
        "status": status if isinstance(status, int) else None,
        "response": value.get("response") if isinstance(value.get("response"), str) else None,
        "error": _text(value.get("error")),
        "elapsed_ms": value.get("elapsed_ms"),
    }


def _check(item: dict[str, Any]) -> dict[str, Any]:
    outcome = _text(item.get("outcome"))
    return {
        "id": _text(item.get("id")),
        "title": _text(item.get("title")),
        "level": _text(item.get("level")),
        "outcome": outcome,
        "outcome_class": OUTCOME_CLASS.get(outcome, ""),
        "detail": _text(item.get("detail")),
        "interface": _text(item.get("interface")),
        "skill": _text(item.get("skill")),
        # "since" is when the check got its current outcome: a page says it for failures only,
        # where "failing since" is news (a pass since last week is not).
        "failing_since": _time(item.get("since")) if outcome == "fail" else None,
        "exchange": _exchange(item.get("exchange")),
    }


def _url(name: str, *args: Any) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def live_context(
    agent: Agent, user: Any, *, report: dict[str, Any], checks: list[Any]
) -> dict[str, Any]:
    """The page's "Live checks" section and the endpoint row of its health: ``report`` is the
    stored report without its rows (cards.reads.parts.report_head), ``checks`` the rows this
    page shows."""
    endpoint = report.get("endpoint") or NOT_CHECKED
    counts = report.get("counts") if isinstance(report.get("counts"), dict) else None
    outcome = agent.live_outcome or NOT_CHECKED
    manager = moderation.can_manage(user, agent)
    checked = bool(agent.live_outcome) or agent.live_checked_at is not None
    words = ENDPOINT_WORDS.get(endpoint, endpoint)
    if endpoint == NOT_CHECKED and checked:
        words = NOT_JUDGED_WORDS
    return {
        "checked": checked,
        "outcome": outcome,
        "outcome_class": OUTCOME_CLASS.get(outcome, ""),
        "checked_at": agent.live_checked_at,
        "failing_since": _time(report.get("failing_since")),
        "counts": counts,
        "endpoint": endpoint,
        "endpoint_words": words,
        "endpoint_class": ENDPOINT_CLASS.get(endpoint, ""),
        "probe_messages": agent.probe_messages,
        "checks": [_check(item) for item in checks if isinstance(item, dict)],
        # Only the owner and staff may change the opt-in or run the checks (live/api.py): the
        # hint is for them, and nobody else is shown how.
        "manager": manager,
        "agent_api_url": _url("agent-detail", agent.pk) if manager else None,
        "probe_url": _url("agent-probe", agent.pk) if manager else None,
        "admin_url": (
            _url("admin:cards_agent_change", agent.pk)
            if manager and getattr(user, "is_staff", False)
            else None
        ),
    }

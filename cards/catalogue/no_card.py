"""One sentence for an agent that has no card yet (issue 39).

Until a crawl stores its first card, an agent has no name, skills, signature, validation or
health worth showing: badges and tables that only a card can fill would contradict each other
("not checked", "degraded", "no skills"). Its page, its row in its owner's lists and "My
agents" say one thing instead: why there is no card, and when the registry tries again.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from cards.models import Agent


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def no_card_sentence(
    *,
    last_error: str,
    last_crawled_at: dt.datetime | None,
    next_crawl_at: dt.datetime | None,
) -> str:
    """``No card yet: <why>; <when the next try is>.`` from what the crawler recorded."""
    reason = last_error.strip().rstrip(".")
    if not reason:
        reason = "the last fetch found no card" if last_crawled_at else "not fetched yet"
    if next_crawl_at is not None:
        when = f"next try {_utc(next_crawl_at)}"
    elif last_crawled_at is None:
        when = "the first fetch is queued"
    else:
        when = "no retry is scheduled"
    return f"No card yet: {reason}; {when}."


def of_agent(agent: Agent) -> str:
    return no_card_sentence(
        last_error=agent.last_error,
        last_crawled_at=agent.last_crawled_at,
        next_crawl_at=agent.next_crawl_at,
    )


def sentences(ids: list[Any]) -> dict[str, str]:
    """The sentence of each agent of ``ids`` that has no card, by id (one query): a list row
    is rendered from the stored summary, which does not say whether a card was ever stored."""
    rows = Agent.objects.filter(pk__in=ids, latest_snapshot__isnull=True).values_list(
        "pk", "last_error", "last_crawled_at", "next_crawl_at"
    )
    return {
        str(pk): no_card_sentence(last_error=error, last_crawled_at=crawled, next_crawl_at=next_at)
        for pk, error, crawled, next_at in rows
    }

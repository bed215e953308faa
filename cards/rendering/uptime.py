"""Uptime: the share of successful crawl attempts over 7 and 30 days, as the documents show it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from cards.models import CrawlAttempt
from cards.rendering.documents import Uptime


def uptimes(agent_ids: list[Any]) -> dict[Any, Uptime]:
    """Share of successful crawl attempts over 7 and 30 days, per agent (one query)."""
    month, week = uptime_windows()
    rows = (
        CrawlAttempt.objects.filter(agent_id__in=agent_ids, started_at__gte=month)
        .values("agent_id")
        .annotate(
            total=Count("id"),
            ok=Count("id", filter=Q(success=True)),
            week_total=Count("id", filter=Q(started_at__gte=week)),
            week_ok=Count("id", filter=Q(started_at__gte=week, success=True)),
        )
    )
    return {
        row["agent_id"]: uptime_of(row["total"], row["ok"], row["week_total"], row["week_ok"])
        for row in rows
    }


def uptime_windows(now: datetime | None = None) -> tuple[datetime, datetime]:
    """The starts of the 30-day and 7-day uptime windows."""
    now = now or timezone.now()
    return now - timedelta(days=30), now - timedelta(days=7)


def uptime_of(total: int, ok: int, week_total: int, week_ok: int) -> Uptime:
    """(7 days, 30 days) shares of successful attempts from their counts; None without any."""
    return (
        round(week_ok / week_total, 4) if week_total else None,
        round(ok / total, 4) if total else None,
    )


# The annotations of :func:`uptime_counts`, in :func:`uptime_of`'s order.
UPTIME_COUNTS = ("up_total", "up_ok", "up_week_total", "up_week_ok")


def uptime_counts(month: Any, week: Any) -> dict[str, Any]:
    """The counts :func:`uptime_of` takes, as annotations of agent rows (one subquery each), so
    a read that locks the agent also brings them: ``month`` and ``week`` are the windows'
    starts."""

    def attempts(since: Any, **only: Any) -> Coalesce:
        rows = CrawlAttempt.objects.filter(agent=OuterRef("pk"), started_at__gte=since, **only)
        counted = rows.order_by().values("agent").annotate(n=Count("id")).values("n")
        return Coalesce(Subquery(counted), 0)

    total, ok, week_total, week_ok = UPTIME_COUNTS
    return {
        total: attempts(month),
        ok: attempts(month, success=True),
        week_total: attempts(week),
        week_ok: attempts(week, success=True),
    }

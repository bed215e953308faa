"""Gauges of the registry's state, read when the metrics are scraped (registry/metrics.py).

No process keeps these: they are the state of the whole registry, read from PostgreSQL and
Redis by the process that answers the scrape, so every node reports the same value (take the
``max`` across instances, never the sum: docs/operations.md). Each costs one cheap read:

* ``registry_crawl_schedule_lag_seconds``: how late the most overdue agent's crawl is, from the
  first row of the partial index on ``next_crawl_at`` (``agent_due_idx``), cut off after
  0.5 s; while it fails the scrape answers the last value read (registry/metrics_exposition.py);
* ``registry_embedding_pending_agents`` and ``registry_embedding_oldest_pending_seconds``: the
  agents waiting for their embedding (search/embedding/pending.py), one Redis round trip.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from django.db import connection, transaction
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from cards.models import Agent
from registry import metrics
from search.embedding import pending

STATEMENT_TIMEOUT_MS = 500


class CrawlScheduleLag:
    """Seconds since the oldest due agent should have been crawled (0 when none is due)."""

    def collect(self) -> Iterator[Metric]:
        due = Agent.objects.filter(next_crawl_at__isnull=False).order_by("next_crawl_at")
        with transaction.atomic():
            if connection.vendor == "postgresql":
                # A scrape must answer within a second whatever the database does.
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL statement_timeout = %s", [STATEMENT_TIMEOUT_MS])
            oldest = due.values_list("next_crawl_at", flat=True).first()
        lag = 0.0 if oldest is None else (timezone.now() - oldest).total_seconds()
        yield GaugeMetricFamily(
            "registry_crawl_schedule_lag_seconds",
            "How far the crawl schedule is behind: seconds since the most overdue agent was due "
            "(0 when none is due). Registry-wide, the same from every node.",
            value=max(0.0, lag),
        )


class EmbeddingBacklog:
    """Agents waiting for their embedding, and how long the first of them has waited."""

    def collect(self) -> Iterator[Metric]:
        found = pending.backlog()
        if found is None:  # no Redis: nothing waits in a queue of its own
            return
        count, oldest = found
        yield GaugeMetricFamily(
            "registry_embedding_pending_agents",
            "Agents waiting for their embedding (semantic search finds them by words meanwhile). "
            "Registry-wide, the same from every node.",
            value=count,
        )
        yield GaugeMetricFamily(
            "registry_embedding_oldest_pending_seconds",
            "Seconds the agent waiting longest for its embedding has waited (0 when none waits).",
            value=0.0 if oldest is None else max(0.0, time.time() - oldest),
        )


def register() -> None:
    """Have every scrape read these (cards' AppConfig.ready)."""
    for collector in (CRAWL_SCHEDULE_LAG, EMBEDDING_BACKLOG):
        metrics.register_scrape_collector(collector)


CRAWL_SCHEDULE_LAG = CrawlScheduleLag()
EMBEDDING_BACKLOG = EmbeddingBacklog()

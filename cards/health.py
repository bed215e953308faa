"""Health of an agent and when to crawl it next, from the outcome of each crawl.

Pure decisions on the agent row (the caller saves it): ``healthy`` after a success;
``degraded`` after failures below the threshold; ``unreachable`` at the threshold (then re-checked
daily); ``gone`` after 404/410 answers for a week (hidden from the default search). Backoff lives
in the row, not in the broker, so it survives restarts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from cards.models import Agent, CrawlAttempt

DAY = 86400.0
_MAX_AGE = re.compile(r"(?:^|,)\s*(s-maxage|max-age)\s*=\s*\"?(\d+)\"?", re.I)


@dataclass(frozen=True)
class HealthPolicy:
    interval: float
    min_interval: float
    max_interval: float
    unreachable_after: int
    gone_after: float
    backoff_base: float
    backoff_cap: float

    @classmethod
    def from_settings(cls) -> HealthPolicy:
        return cls(
            interval=float(settings.REGISTRY_CRAWL_INTERVAL_SECONDS),
            min_interval=float(settings.REGISTRY_CRAWL_MIN_INTERVAL_SECONDS),
            max_interval=float(settings.REGISTRY_CRAWL_MAX_INTERVAL_SECONDS),
            unreachable_after=settings.REGISTRY_UNREACHABLE_AFTER_FAILURES,
            gone_after=float(settings.REGISTRY_GONE_AFTER_SECONDS),
            backoff_base=float(settings.REGISTRY_CRAWL_BACKOFF_BASE_SECONDS),
            backoff_cap=DAY,
        )


def max_age_of(headers: Mapping[str, str]) -> float | None:
    """The freshness lifetime a response asks for (``s-maxage`` over ``max-age``), if any."""
    value = headers.get("cache-control", "")
    if "no-store" in value.lower() or "no-cache" in value.lower():
        return 0.0
    found = {name.lower(): int(number) for name, number in _MAX_AGE.findall(value)}
    if "s-maxage" in found:
        return float(found["s-maxage"])
    if "max-age" in found:
        return float(found["max-age"])
    return None


def next_interval(max_age: float | None, policy: HealthPolicy) -> float:
    """The card's own max-age within bounds, else the default interval; spread by +-10%."""
    base = policy.interval if max_age is None else max_age
    base = min(max(base, policy.min_interval), policy.max_interval)
    return base * random.uniform(0.9, 1.1)


def after_success(
    agent: Agent, now: datetime, *, max_age: float | None, policy: HealthPolicy | None = None
) -> None:
    policy = policy or HealthPolicy.from_settings()
    agent.health = Agent.Health.HEALTHY
    agent.consecutive_failures = 0
    agent.gone_since = None
    agent.lease_until = None
    agent.next_crawl_at = now + timedelta(seconds=next_interval(max_age, policy))


def failure_delay(failures: int, policy: HealthPolicy) -> float:
    """Exponential backoff with jitter: base, 2x base, 4x base ... up to a day."""
    ceiling = min(policy.backoff_cap, policy.backoff_base * 2 ** max(failures - 1, 0))
    return ceiling * random.uniform(0.5, 1.0)


def after_failure(
    agent: Agent,
    now: datetime,
    *,
    http_status: int | None,
    retry_after: float | None,
    policy: HealthPolicy | None = None,
) -> None:
    policy = policy or HealthPolicy.from_settings()
    agent.consecutive_failures += 1
    if http_status in (404, 410):
        agent.gone_since = agent.gone_since or now
    else:
        agent.gone_since = None
    if (
        agent.gone_since is not None
        and (now - agent.gone_since).total_seconds() >= policy.gone_after
    ):
        agent.health = Agent.Health.GONE
    elif agent.consecutive_failures >= policy.unreachable_after:
        agent.health = Agent.Health.UNREACHABLE
    else:
        agent.health = Agent.Health.DEGRADED
    if agent.health in (Agent.Health.UNREACHABLE, Agent.Health.GONE):
        delay = DAY
    else:
        delay = failure_delay(agent.consecutive_failures, policy)
    if retry_after is not None:
        delay = max(delay, min(max(retry_after, 60.0), DAY))
    agent.lease_until = None
    agent.next_crawl_at = now + timedelta(seconds=delay)


def uptime(agent: Agent, *, days: int, now: datetime | None = None) -> float | None:
    """Share of successful crawl attempts over the last ``days`` days (None without attempts)."""
    now = now or timezone.now()
    tally = CrawlAttempt.objects.filter(
        agent=agent, started_at__gte=now - timedelta(days=days)
    ).aggregate(total=Count("id"), ok=Count("id", filter=Q(success=True)))
    if not tally["total"]:
        return None
    return round(tally["ok"] / tally["total"], 4)

"""Polling an agent's detail until its crawl or its live checks have news (progress on stderr)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from a2a_registry_cli.client import ApiError, Registry
from a2a_registry_cli.session import Failure, Session

POLL_SECONDS = 2.0


def section(detail: dict[str, Any], name: str) -> dict[str, Any]:
    value = detail.get(name)
    return value if isinstance(value, dict) else {}


def until(
    session: Session,
    registry: Registry,
    agent_id: str,
    done: Callable[[dict[str, Any]], bool],
    what: str,
    timeout: float,
) -> dict[str, Any]:
    """The agent's detail once ``done(detail)``; raises Failure after ``timeout`` seconds."""
    started = time.monotonic()
    while True:
        detail = registry.agent(agent_id)
        if done(detail):
            return detail
        waited = time.monotonic() - started
        if waited >= timeout:
            raise Failure(
                f"Gave up waiting for {what} after {timeout:.0f} s.",
                hint="The registry's queue may be busy: run the command again later, or pass "
                "a longer --timeout.",
            )
        session.progress(f"  waiting for {what}... {waited:.0f} s")
        time.sleep(min(POLL_SECONDS, max(0.1, timeout - waited)))


def crawled(
    session: Session, registry: Registry, agent_id: str, before: Any, timeout: float
) -> dict[str, Any]:
    """Wait until the crawl is no longer pending and (for a re-crawl) has a new time."""

    def done(detail: dict[str, Any]) -> bool:
        crawl = section(detail, "crawl")
        if crawl.get("status") == "pending":
            return False
        return before is None or crawl.get("last_crawled_at") != before

    return until(session, registry, agent_id, done, "the crawl", timeout)


def probed(
    session: Session, registry: Registry, agent_id: str, before: Any, timeout: float
) -> tuple[dict[str, Any], ApiError | None]:
    """Ask for the live checks and wait for their new verdict. Returns the detail and, when
    the probe was refused (403: no proof or not the owner; 429: checked moments ago), the
    refusal."""
    try:
        registry.probe(agent_id)
    except ApiError as exc:
        if exc.status in (403, 429):
            return registry.agent(agent_id), exc
        raise

    def done(detail: dict[str, Any]) -> bool:
        checked = section(detail, "live").get("checked_at")
        return checked is not None and checked != before

    return until(session, registry, agent_id, done, "the live checks", timeout), None

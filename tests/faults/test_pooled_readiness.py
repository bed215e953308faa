"""With a connection pool (REGISTRY_DB_POOL, compose's protocols service), /readyz and the
scrape's database check answer at once while PostgreSQL is stopped (issue 46): through the pool
a probe waited for its 30 s timeout, longer than any orchestrator's probe timeout, and answered
the outage after it. The check uses a connection of its own with a 2 s connect timeout
(registry/health.py)."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.faults.services import PrivatePostgres, Registry, wait_until
from tests.metrics.scraping import parse, value

pytestmark = pytest.mark.disruptive


def _timed(url: str) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = httpx.get(url, timeout=60)
    return time.monotonic() - started, response


def test_readiness_with_a_pool_answers_at_once_while_postgresql_is_stopped(
    stack: Registry, private_postgres: PrivatePostgres
) -> None:
    base = stack.serve(REGISTRY_DB_POOL="true")
    took, ready = _timed(base + "/readyz")
    assert (ready.status_code, ready.json()["status"]) == (200, "ready"), ready.text
    httpx.get(base + "/api/v1/tags", timeout=10)  # the pool has handed out connections

    private_postgres.stop()
    for _ in range(3):
        took, ready = _timed(base + "/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.json()["database"].startswith("unreachable: "), ready.text
        assert took < 2.0, f"/readyz took {took:.2f} s with PostgreSQL stopped"
        took, scraped = _timed(base + "/metrics")
        assert scraped.status_code == 200
        assert value(parse(scraped.text), "registry_dependency_up", dependency="database") == 0
        assert took < 2.0, f"/metrics took {took:.2f} s with PostgreSQL stopped"

    private_postgres.start()

    def ready_again() -> bool:
        answer = httpx.get(base + "/readyz", timeout=10)
        return answer.status_code == 200 and answer.json()["status"] == "ready"

    assert wait_until(ready_again, timeout=30, step=0.5), f"not ready again; {stack.logs}"

"""PostgreSQL restarted (a fast stop, or a kill -9 of the postmaster) under live processes.

The cluster is the test's own (tests/faults/services.py), never the machine's.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.factories import minimal_card
from tests.faults.doors import failing
from tests.faults.services import PrivatePostgres, Registry, wait_until
from tests.support import CardServer, Reply

pytestmark = pytest.mark.disruptive

# How long after PostgreSQL answers again every door must answer correctly.
RECOVERY_SECONDS = 5.0


def _detail(base: str, token: str, agent_id: str) -> dict[str, Any] | str:
    """The agent's detail, or what went wrong ("unreachable", "error")."""
    try:
        response = httpx.get(
            f"{base}/api/v1/agents/{agent_id}",
            headers={"Authorization": f"Token {token}"},
            timeout=5,
        )
    except httpx.HTTPError:
        return "unreachable"
    return dict(response.json()) if response.status_code == 200 else "error"


def _status(base: str, token: str, agent_id: str) -> str:
    body = _detail(base, token, agent_id)
    return body if isinstance(body, str) else str(body.get("status"))


def _submit(base: str, token: str, url: str) -> str:
    response = httpx.post(
        f"{base}/api/v1/agents",
        json={"url": url},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert response.status_code in (200, 201, 202), response.text
    return str(response.json()["id"])


@pytest.mark.parametrize("kill", [False, True], ids=["fast-stop", "kill-9"])
def test_a_worker_recovers_after_postgresql_restarts(
    stack: Registry,
    private_postgres: PrivatePostgres,
    publisher_token: str,
    card_server: CardServer,
    kill: bool,
) -> None:
    base = stack.serve()
    stack.worker()
    for name in ("before", "after"):
        card_server.serve(f"/{name}-{kill}.json", json.dumps(minimal_card(name=name)).encode())
    before = _submit(base, publisher_token, card_server.url(f"/before-{kill}.json"))
    assert wait_until(lambda: _status(base, publisher_token, before) == "ok", timeout=60)

    private_postgres.restart(kill=kill)

    after = ""

    def submitted() -> bool:
        nonlocal after
        try:
            after = _submit(base, publisher_token, card_server.url(f"/after-{kill}.json"))
        except (AssertionError, httpx.HTTPError):
            return False
        return True

    assert wait_until(submitted, timeout=RECOVERY_SECONDS, step=0.25)
    assert wait_until(lambda: _status(base, publisher_token, after) == "ok", timeout=90), (
        f"the worker did not crawl after the restart; logs in {stack.logs}"
    )


def _crawled_since(base: str, token: str, agent_id: str, since: str) -> bool:
    body = _detail(base, token, agent_id)
    if isinstance(body, str):
        return False
    last = str((body.get("crawl") or {}).get("last_crawled_at") or "")
    return body.get("status") == "ok" and last > since


@pytest.mark.parametrize("kill", [False, True], ids=["fast-stop", "kill-9"])
def test_a_sweep_batch_cut_by_a_postgresql_restart_crawls_every_agent(
    stack: Registry,
    private_postgres: PrivatePostgres,
    publisher_token: str,
    card_server: CardServer,
    kill: bool,
) -> None:
    """The sweep's batch (cards.crawl_agents) is crawling slow cards when PostgreSQL goes away:
    the agents not crawled yet are tried again once it is back, and every one ends crawled."""
    base = stack.serve()
    stack.worker()
    body = json.dumps(minimal_card(name="Slow")).encode()

    def slow(handler: Any) -> Reply:
        time.sleep(0.4)
        return Reply(body=body, headers={"Content-Type": "application/json"})

    ids = []
    for n in range(6):
        card_server.routes[f"/slow-{kill}-{n}.json"] = slow
        ids.append(_submit(base, publisher_token, card_server.url(f"/slow-{kill}-{n}.json")))
    for agent_id in ids:
        assert wait_until(lambda a=agent_id: _status(base, publisher_token, a) == "ok", 60)

    swept_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    stack.manage(
        "shell", "-c",
        "from django.utils import timezone; from cards.models import Agent; "
        f"Agent.objects.filter(pk__in={ids!r}).update(next_crawl_at=timezone.now())",
    )  # fmt: skip
    # Ours and any other agent due on this cluster (the demo agents): one batch of 8 at most.
    assert int(stack.manage("crawl_due").split()[0]) >= len(ids)
    time.sleep(1.0)  # the batch is at its second or third card
    private_postgres.restart(kill=kill)

    for agent_id in ids:
        assert wait_until(
            lambda a=agent_id: _crawled_since(base, publisher_token, a, swept_at), timeout=90
        ), f"agent {agent_id} was not crawled again; logs in {stack.logs}"
    log = "".join(path.read_text(errors="replace") for path in stack.logs.glob("worker-*.log"))
    # The batch was cut and tried again (its rest, once PostgreSQL answered).
    # (Each receipt is a line of registry/logs/task_lines.py: "task NAME[id] received ...".)
    assert len(re.findall(r"task cards\.crawl_agents\[[^\]]+\] received", log)) >= 2, log


# compose's protocols service: gunicorn's uvicorn workers with the psycopg pool.
PROTOCOLS = [
    sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-k",
    "registry.asgi_serving.BoundedUvicornWorker", "--bind", "127.0.0.1:{port}",
    "registry.asgi:application",
]  # fmt: skip


# The production web command (Dockerfile, compose's web): granian's threads keep one persistent
# connection each (CONN_MAX_AGE), the connections a restart leaves broken under a live server.
# MCP is not among its doors: compose serves /mcp from the protocols service (above).
WEB = [
    str(Path(sys.executable).with_name("granian")), "--interface", "rsgi", "--host", "127.0.0.1",
    "--port", "{port}", "--workers", "1", "--no-ws", "--http", "1",
    "--http1-header-read-timeout", "10000", "registry.rsgi:application",
]  # fmt: skip


@pytest.mark.parametrize("kill", [False, True], ids=["fast-stop", "kill-9"])
@pytest.mark.parametrize("server", ["uvicorn", "compose-protocols", "granian-rsgi"])
def test_every_door_recovers_within_seconds_of_postgresql_returning(
    stack: Registry, private_postgres: PrivatePostgres, weather_agent: str, kill: bool, server: str
) -> None:
    if server == "uvicorn":
        base = stack.serve()
    elif server == "compose-protocols":
        base = stack.serve(PROTOCOLS, REGISTRY_DB_POOL="true")
    else:
        base = stack.serve(WEB)
    skip = ("mcp",) if server == "granian-rsgi" else ()
    # Every door holds a database connection before the restart (the stale-connection case).
    assert failing(base, weather_agent, skip) == {}

    private_postgres.restart(kill=kill)
    returned = time.monotonic()

    last: dict[str, str] = {}

    def all_answer() -> bool:
        nonlocal last
        last = failing(base, weather_agent, skip)
        return not last

    assert wait_until(all_answer, timeout=RECOVERY_SECONDS, step=0.2), (
        f"{RECOVERY_SECONDS} s after PostgreSQL returned, these doors still fail: {last}"
    )
    recovered = time.monotonic() - returned
    # And they keep answering: not one lucky call.
    for _ in range(3):
        assert failing(base, weather_agent, skip) == {}, (
            f"recovered after {recovered:.1f} s, then failed"
        )

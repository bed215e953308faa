"""PostgreSQL restarted (a fast stop, or a kill -9 of the postmaster) under live processes.

The cluster is the test's own (tests/faults/services.py), never the machine's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.factories import minimal_card
from tests.faults.doors import failing
from tests.faults.services import PrivatePostgres, Registry, wait_until
from tests.support import CardServer

pytestmark = pytest.mark.disruptive

# How long after PostgreSQL answers again every door must answer correctly.
RECOVERY_SECONDS = 5.0


def _status(base: str, token: str, agent_id: str) -> str:
    try:
        response = httpx.get(
            f"{base}/api/v1/agents/{agent_id}",
            headers={"Authorization": f"Token {token}"},
            timeout=5,
        )
    except httpx.HTTPError:
        return "unreachable"
    return str(response.json().get("status")) if response.status_code == 200 else "error"


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


# compose's protocols service: gunicorn's uvicorn workers with the psycopg pool.
PROTOCOLS = [
    sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-k",
    "uvicorn_worker.UvicornWorker", "--bind", "127.0.0.1:{port}", "registry.asgi:application",
]  # fmt: skip


# The production web command (Dockerfile, compose's web): granian's threads keep one persistent
# connection each (CONN_MAX_AGE), the connections a restart leaves broken under a live server.
# MCP is not among its doors: compose serves /mcp from the protocols service (above).
WEB = [
    str(Path(sys.executable).with_name("granian")), "--interface", "rsgi", "--host", "127.0.0.1",
    "--port", "{port}", "--workers", "1", "--no-ws", "registry.rsgi:application",
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

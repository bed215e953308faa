"""PostgreSQL restarted while a worker runs: the worker recovers without manual action.

Runs last (marker ``disruptive``): it restarts the machine's PostgreSQL cluster, as
``scripts/services.sh`` would start it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection

from cards.models import Agent
from cards.services import agent_submit
from tests.factories import minimal_card
from tests.support import CardServer
from tests.workers import wait_for

pytestmark = [pytest.mark.disruptive, pytest.mark.celery_worker]


def restart_postgres() -> None:
    versions = sorted(p.name for p in Path("/etc/postgresql").iterdir())
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "restart"],
        check=True,
        capture_output=True,
        timeout=120,
    )


def database_answers() -> bool:
    try:
        connection.close()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # still starting
        return False


def test_a_worker_recovers_after_postgresql_restarts(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    card_server: CardServer,
    loopback_allowed: None,
) -> None:
    if shutil.which("pg_ctlcluster") is None or not Path("/etc/postgresql").is_dir():
        pytest.skip("this machine's PostgreSQL is not managed by pg_ctlcluster")
    start_worker()
    for name in ("before", "after"):
        card_server.serve(f"/{name}.json", json.dumps(minimal_card(name=name)).encode())
    before, _ = agent_submit(url=card_server.url("/before.json"), user=None)

    def ok(agent: Agent) -> Callable[[], bool]:
        def check() -> bool:
            agent.refresh_from_db()
            return agent.status == "ok"

        return check

    assert wait_for(ok(before)), before.last_error
    restart_postgres()
    assert wait_for(database_answers, timeout=60), "PostgreSQL did not come back"
    after, _ = agent_submit(url=card_server.url("/after.json"), user=None)
    assert wait_for(ok(after), timeout=90), (after.status, after.last_error)
    assert after.name == "after"

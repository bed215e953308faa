"""``make run`` runs the periodic schedule in the server itself (issue 39, item 3).

With nothing configured there is no beat: the agent page's "next try 19:28 UTC" would never
come. The real server as ``make run`` starts it (the Makefile's own uvicorn command, SQLite,
tasks in-process) crawls a due agent with no request sent to it; the schedule's loop runs each
entry every interval and stops with the server; with a broker it is not started at all.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from registry import schedule_in_process
from registry.schedule_in_process import InProcessSchedule, intervals, with_schedule
from tests.factories import minimal_card
from tests.support import CardServer, free_port, make_run_environment, running_server

ROOT = Path(__file__).resolve().parents[1]


def make_run_server_command(port: int) -> list[str]:
    """The Makefile's ``run`` server command (``$(PY) -m uvicorn ...``) on ``port``."""
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    match = re.search(r"\$\(PY\) -m (uvicorn .*)$", recipe, re.MULTILINE)
    assert match is not None, "make run starts no uvicorn server"
    words = shlex.split(match.group(1))
    words[words.index("--port") + 1] = str(port)
    return [sys.executable, "-m", *words]


def nothing_configured(directory: Path, **extra: str) -> dict[str, str]:
    """``make run``'s environment: no database, broker or key; debug on; SQLite in
    ``directory``."""
    return make_run_environment(
        directory,
        DJANGO_SETTINGS_MODULE="registry.settings",
        REGISTRY_EMBEDDING_DIR=str(directory / "embedding"),
        **extra,
    )


def test_make_run_crawls_a_due_agent_without_any_request(tmp_path: Path) -> None:
    with running_server() as cards:
        card_url = cards.serve(
            "/due/agent-card.json", json.dumps(minimal_card(name="Crawled by itself")).encode()
        )
        env = nothing_configured(
            tmp_path,
            # The card server is on loopback over http; the sweep every second, not 30.
            REGISTRY_FETCH_ALLOW_HTTP="true",
            REGISTRY_FETCH_ALLOWED_NETWORKS="127.0.0.0/8",
            REGISTRY_SWEEP_INTERVAL_SECONDS="1",
            REGISTRY_LIVE_CHECKS="false",
            REGISTRY_EMBEDDINGS="off",
        )
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run(
            [*manage, "migrate", "--noinput"], env=env, cwd=ROOT, check=True, capture_output=True
        )
        # A due agent (as a failed first fetch leaves it: next_crawl_at in the past).
        subprocess.run(
            [
                *manage,
                "shell",
                "-c",
                "from django.utils import timezone; from cards.models import Agent; "
                f"Agent.objects.create(url={card_url!r}, card_url={card_url!r}, "
                "next_crawl_at=timezone.now())",
            ],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        log = tmp_path / "server.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                make_run_server_command(free_port()),
                env=env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            name = _wait_for_name(tmp_path / "db.sqlite3", server, log, cards)
        finally:
            server.terminate()
            server.wait(timeout=20)
    assert name == "Crawled by itself"
    text = log.read_text()
    assert "running the periodic schedule in-process" in text
    assert "cards.sweep_due every 1 s" in text and "live.sweep" in text


def _wait_for_name(database: Path, server: Any, log: Path, cards: CardServer) -> str:
    """The agent's name once a crawl stored its card (read from SQLite: no request to the
    registry at all)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()
        with sqlite3.connect(database, timeout=5) as db:
            row = db.execute("SELECT name FROM cards_agent").fetchone()
        if row and row[0]:
            assert {path for path, _ in cards.requests} == {"/due/agent-card.json"}
            return str(row[0])
        time.sleep(0.5)
    raise AssertionError(f"the due agent was not crawled:\n{log.read_text()[-3000:]}")


def test_each_entry_runs_every_interval_until_stopped() -> None:
    ran: list[tuple[str, float]] = []
    lock = threading.Lock()

    def record(task: str) -> None:
        with lock:
            ran.append((task, time.monotonic()))

    schedule = InProcessSchedule(
        {
            "fast": {"task": "a.fast", "schedule": 0.2},
            "slow": {"task": "a.slow", "schedule": 0.5},
            "cron": {"task": "a.cron", "schedule": object()},  # not an interval: left to beat
        },
        run=record,
    )
    started = time.monotonic()
    schedule.start()
    time.sleep(1.15)
    schedule.stop()
    stopped = time.monotonic()
    count = len(ran)
    time.sleep(0.4)
    assert len(ran) == count, "it ran after stop()"
    fast = [at - started for task, at in ran if task == "a.fast"]
    slow = [at - started for task, at in ran if task == "a.slow"]
    assert 4 <= len(fast) <= 6 and fast[0] >= 0.19
    assert len(slow) == 2 and slow[0] >= 0.49
    assert not any(task == "a.cron" for task, _ in ran)
    assert stopped - started < 1.5
    assert intervals({"x": {"task": "t", "schedule": 30.0}}) == {"x": ("t", 30.0)}


def test_with_a_broker_the_server_runs_no_schedule(settings: Any) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        return None

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/6"
    assert with_schedule(app) is app
    settings.CELERY_BROKER_URL = None
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert schedule_in_process.wanted()
    assert with_schedule(app) is not app

"""The worker's and the beat's heartbeats, and the check an orchestrator runs (issue 46, §1).

A real Celery worker and a real beat write into this test's own heartbeat directory, every
half second; the check is the command compose's healthchecks run
(``python -m registry.heartbeat check worker|beat``), in a process of its own. It passes while
they run and fails, with a one-line reason, once they have stopped and the maximum age passed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from registry import heartbeat
from tests.workers import ROOT, redis_available, redis_url, wait_for, worker_env

MAX_AGE = "3"


@pytest.fixture
def heartbeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's heartbeat directory, in the environment of what it starts."""
    directory = tmp_path / "heartbeats"
    monkeypatch.setenv("REGISTRY_HEARTBEAT_DIR", str(directory))
    monkeypatch.setenv("REGISTRY_HEARTBEAT_SECONDS", "0.5")
    return directory


def check(kind: str, max_age: str = MAX_AGE) -> subprocess.CompletedProcess[str]:
    """The healthcheck's command, as compose runs it."""
    return subprocess.run(
        [sys.executable, "-m", "registry.heartbeat", "check", kind, "--max-age", max_age],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _fresh(kind: str) -> Callable[[], bool]:
    return lambda: check(kind).returncode == 0


def _stays_fresh(kind: str, seconds: float) -> None:
    """The check passes again and again over ``seconds`` (longer than the maximum age)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check(kind)
        assert result.returncode == 0, result.stderr
        time.sleep(0.5)


def _goes_stale(kind: str) -> str:
    """Wait for the check to fail; its one-line reason."""
    assert wait_for(lambda: check(kind).returncode == 1, timeout=30)
    result = check(kind)
    assert result.returncode == 1
    reason = result.stderr.strip()
    assert "\n" not in reason, reason
    return reason


def test_the_check_without_a_heartbeat_fails_with_a_reason(heartbeats: Path) -> None:
    result = check("worker")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"worker heartbeat missing: no {heartbeats}/worker-{os.uname().nodename}"
    )
    assert result.stdout == ""


def test_a_heartbeat_is_fresh_until_its_max_age(heartbeats: Path) -> None:
    written = heartbeat.write("beat", now=time.time() - 100)
    assert written.parent == heartbeats
    assert check("beat", max_age="600").returncode == 0
    stale = check("beat", max_age="30")
    assert stale.returncode == 1
    assert re.fullmatch(
        rf"beat heartbeat stale: written 1\d\d s ago \(max 30 s\) in {written}\n", stale.stderr
    ), stale.stderr
    written.write_text("garbage\n")
    assert check("beat").stderr.startswith("beat heartbeat unreadable:")


def test_a_bad_interval_is_reported_not_a_traceback(
    heartbeats: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heartbeat.write("worker")
    monkeypatch.setenv("REGISTRY_HEARTBEAT_SECONDS", "soon")
    result = subprocess.run(
        [sys.executable, "-m", "registry.heartbeat", "check", "worker"],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "REGISTRY_HEARTBEAT_SECONDS must be a number" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.celery_worker
def test_a_running_worker_is_fresh_and_a_stopped_one_goes_stale(
    heartbeats: Path, start_worker: Callable[..., subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    worker = start_worker(pool="prefork", concurrency=1)
    assert wait_for(_fresh("worker"), timeout=90), (tmp_path / "worker-0.log").read_text()
    _stays_fresh("worker", seconds=4)
    assert worker.poll() is None
    worker.terminate()
    worker.wait(timeout=30)
    reason = _goes_stale("worker")
    assert reason.startswith("worker heartbeat stale: written "), reason
    assert f"(max {MAX_AGE} s)" in reason


def test_a_running_beat_is_fresh_and_a_stopped_one_goes_stale(
    heartbeats: Path, tmp_path: Path
) -> None:
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}")
    import redis

    log = tmp_path / "beat.log"
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "registry", "beat", "--loglevel=INFO",
         "--schedule", str(tmp_path / "celerybeat-schedule")],
        cwd=ROOT,
        env=worker_env(url),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert wait_for(_fresh("beat"), timeout=90), log.read_text()
        assert "registry.heartbeat_celery.HeartbeatScheduler" in log.read_text()
        _stays_fresh("beat", seconds=4)
        assert beat.poll() is None
    finally:
        beat.terminate()
        beat.wait(timeout=30)
        redis.Redis.from_url(url).flushdb()  # the sweeps it sent, which no worker took
    reason = _goes_stale("beat")
    assert reason.startswith("beat heartbeat stale: written "), reason

"""REGISTRY_LOG_FORMAT (issue 38): one JSON object a line for a log pipeline, or text for people;
each line with its request id, task and agent where known. Django configures logging from the
setting in a process of its own here, as a server or a worker does at start."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from celery.app.log import TaskFormatter
from celery.utils.log import ColorFormatter

from registry.logs import context, task_signals
from tests.serving_commands import get, granian_command, running, server_environment
from tests.support import free_port
from tests.workers import ROOT, redis_available, redis_url, wait_for

SCRIPT = """
import logging, django
django.setup()
from registry.logs import context
log = logging.getLogger("registry.demo")
log.info("starting")
with context.bound(request="req-1", task="cards.crawl_agent", agent="agent-9"):
    log.warning("two\\nlines, \\"quoted\\", caf\\u00e9 %s", "and args", extra={"attempt": 2})
    try:
        {}["missing"]
    except KeyError:
        log.exception("it failed")
logging.getLogger("uvicorn.access").info('%s - "GET / HTTP/1.1" %d', "127.0.0.1:1", 200)
"""


def _run(log_format: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="registry.settings",
        DJANGO_SECRET_KEY="test-only-secret",
        REGISTRY_LOG_FORMAT=log_format,
        PYTHONWARNINGS="ignore",
        PYTHONIOENCODING="utf-8",
    )
    return subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )


def test_json_is_one_object_a_line_with_the_context_and_the_exception() -> None:
    done = _run("json")

    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # every line parses
    starting, warning, failed, access = lines
    assert list(starting)[:7] == [
        "time",
        "level",
        "logger",
        "message",
        "request_id",
        "task_name",
        "agent_id",
    ]
    assert starting["time"].endswith("+00:00") and "T" in starting["time"]
    assert starting["level"] == "INFO" and starting["logger"] == "registry.demo"
    assert starting["message"] == "starting"
    assert (starting["request_id"], starting["task_name"], starting["agent_id"]) == (None,) * 3
    assert "exception" not in starting and "request_tag" not in starting
    assert warning["message"] == 'two\nlines, "quoted", caf\u00e9 and args'
    assert (warning["request_id"], warning["task_name"], warning["agent_id"]) == (
        "req-1",
        "cards.crawl_agent",
        "agent-9",
    )
    assert warning["attempt"] == 2  # extra= is data too
    assert failed["level"] == "ERROR" and failed["request_id"] == "req-1"
    assert failed["exception"].startswith("Traceback (most recent call last):")
    assert "KeyError: 'missing'" in failed["exception"]
    # The web server's own lines go through the same handler.
    assert access["logger"] == "uvicorn.access" and access["message"].endswith('" 200')


def test_text_is_the_message_after_the_request_id_when_there_is_one() -> None:
    done = _run("text")

    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "starting"
    assert lines[1] == "[req-1] two"  # the message as it is, newline included
    assert lines[2] == 'lines, "quoted", caf\u00e9 and args'
    assert lines[3] == "[req-1] it failed"
    assert lines[4] == "Traceback (most recent call last):"
    assert not any(line.startswith("{") for line in lines)


def test_an_unknown_format_stops_the_process_with_the_settings_name() -> None:
    done = _run("yaml")

    assert done.returncode != 0
    assert "REGISTRY_LOG_FORMAT must be text or json (got 'yaml')" in done.stderr


# --- Celery's handlers (worker and beat) -------------------------------------------------------


def _celery_handler(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    """A logger with a handler as Celery's worker makes one, given to the receiver Celery calls
    once it has made it (``after_setup_logger``)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    log = logging.Logger("tests.celery_handlers", logging.INFO)
    log.addHandler(handler)
    task_signals._format_handlers(logger=log)
    return log, stream


def test_celerys_text_format_gets_the_request_id_before_the_message(settings: Any) -> None:
    settings.REGISTRY_LOG_FORMAT = "text"
    fmt = "[%(asctime)s: %(levelname)s/%(processName)s] %(message)s"
    log, stream = _celery_handler(ColorFormatter(fmt, use_color=False))

    log.info("outside")
    with context.bound(request="beat-1", task="cards.sweep_due"):
        log.info("inside")

    outside, inside = stream.getvalue().splitlines()
    assert outside.endswith("/MainProcess] outside")
    assert inside.endswith("/MainProcess] [beat-1] inside")


def test_celerys_task_format_keeps_its_task_name(settings: Any) -> None:
    settings.REGISTRY_LOG_FORMAT = "text"
    fmt = "%(levelname)s %(task_name)s[%(task_id)s]: %(message)s"
    log, stream = _celery_handler(TaskFormatter(fmt, use_color=False))

    with context.bound(request="r-2"):
        log.warning("queued")

    assert stream.getvalue() == "WARNING ???[???]: [r-2] queued\n"


def test_celerys_handlers_write_json_when_the_setting_says_so(settings: Any) -> None:
    settings.REGISTRY_LOG_FORMAT = "json"
    log, stream = _celery_handler(ColorFormatter("%(message)s", use_color=True))

    with context.bound(request="w-3", task="cards.crawl_agent", agent="a-3"):
        log.info("crawled")

    line = json.loads(stream.getvalue())
    assert line["message"] == "crawled" and line["logger"] == "tests.celery_handlers"
    assert (line["request_id"], line["task_name"], line["agent_id"]) == (
        "w-3",
        "cards.crawl_agent",
        "a-3",
    )


def test_the_pools_own_logger_writes_json_too(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Celery gives billiard's pool logger a handler of its own, beside the root's: a pool
    child lost ("Process 'ForkPoolWorker-2' exited with 'signal 15'") was a text line among the
    JSON ones (the failure drills found it: tests/faults/test_drills.py)."""
    from celery.utils.log import get_multiprocessing_logger

    settings.REGISTRY_LOG_FORMAT = "json"
    pool = get_multiprocessing_logger()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ColorFormatter("[%(levelname)s/%(processName)s] %(message)s"))
    monkeypatch.setattr(pool, "handlers", [handler])
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # what Celery sends the signal with

    task_signals._format_handlers(logger=root)
    pool.error("Process %r pid:%d exited with %r", "ForkPoolWorker-2", 7, "signal 15 (SIGTERM)")

    line = json.loads(stream.getvalue())
    assert line["level"] == "ERROR" and line["logger"] == pool.name
    assert line["message"] == "Process 'ForkPoolWorker-2' pid:7 exited with 'signal 15 (SIGTERM)'"


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        (("a-1",), {}, "a-1"),
        ((), {"agent_id": "a-2"}, "a-2"),
        (("a-3", True), {}, "a-3"),
        ((), {}, None),
    ],
)
def test_the_agent_is_read_from_a_tasks_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], expected: str | None
) -> None:
    from live.tasks import check_agent  # (self, agent_id, force=False), bound

    assert task_signals.agent_of(check_agent, args, kwargs) == expected


def test_a_batch_task_has_no_one_agent() -> None:
    from cards.tasks import crawl_agents

    assert task_signals.agent_of(crawl_agents, (["a-1", "a-2"],), {}) is None


# --- Every line of real processes (issue 46) ---------------------------------------------------


def _every_line_is_json(text: str) -> list[dict[str, Any]]:
    """Each line of ``text`` as the JSON object it must be (an assertion names the first that
    is not)."""
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"not JSON: {line!r}\n---\n{text}") from None
    return lines


def test_granian_its_workers_and_a_respawn_write_only_json(tmp_path: Path) -> None:
    """The Dockerfile's command and log configuration in JSON: granian's main process, a
    worker killed and respawned, the application's lines and its access lines."""
    port = free_port()
    log = tmp_path / "granian.log"
    env = server_environment(
        tmp_path,
        REGISTRY_LOG_FORMAT="json",
        PYTHONWARNINGS="default",
        GRANIAN_LOG_CONFIG=str(ROOT / "granian-logging.json"),  # as the image sets it
    )
    with running(granian_command(port, workers="1"), env, log, port=port, booting="Started worker"):
        assert get(port, "/healthz").startswith(b"HTTP/1.1 200")
        assert get(port, "/no/such/page").startswith(b"HTTP/1.1 404")
        spawned = re.search(r"Spawning worker-1 with PID: (\d+)", log.read_text())
        assert spawned is not None, log.read_text()
        os.kill(int(spawned.group(1)), signal.SIGKILL)
        started = '"message": "Started worker-1"'
        assert wait_for(lambda: log.read_text().count(started) >= 2, 60), log.read_text()
    lines = _every_line_is_json(log.read_text())

    messages = [line["message"] for line in lines]
    assert any(m.startswith("Respawning worker-1") for m in messages), messages
    assert any(m.startswith("Listening at") for m in messages)
    access = [line for line in lines if line["logger"] == "registry.access"]
    healthz = [line for line in access if line["route"] == "healthz"]
    assert healthz and all(line["status"] == 200 for line in healthz)
    assert [line["status"] for line in access if line["route"] is None] == [404]
    assert all(line["request_id"] and line["client"] == "127.0.0.1" for line in access)


def _celery(tmp_path: Path, program: list[str], started: str) -> str:
    """The output of ``celery -A registry <program>`` in JSON, stopped (SIGTERM) once
    ``started`` is in it."""
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}")
    env = {
        **os.environ,
        "REDIS_URL": url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_SECRET_KEY": "test-only-secret",
        "REGISTRY_LOG_FORMAT": "json",
        "PYTHONWARNINGS": "default",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "celery.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "registry", *program],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        assert wait_for(lambda: started in log.read_text(), 60), log.read_text()
        assert process.poll() is None, log.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    return log.read_text()


def test_the_celery_worker_its_banner_warnings_and_shutdown_write_only_json(
    tmp_path: Path,
) -> None:
    program = ["worker", "--pool=solo", "--loglevel=INFO", "--without-heartbeat"]
    program += ["--without-gossip", "--without-mingle", "--hostname=jsonlog@%h"]
    text = _celery(tmp_path, program, " ready.")
    lines = _every_line_is_json(text)

    loggers = {line["logger"] for line in lines}
    assert "celery.banner" in loggers, text  # the banner, logged not printed
    assert any(line["message"].endswith(" ready.") for line in lines)
    assert any("Warm shutdown" in line["message"] for line in lines)  # printed by Celery


def test_celery_beat_and_its_banner_write_only_json(tmp_path: Path) -> None:
    program = ["beat", "--loglevel=INFO", "--schedule", str(tmp_path / "schedule")]
    text = _celery(tmp_path, program, "beat: Starting...")
    lines = _every_line_is_json(text)

    [banner] = [line for line in lines if line["logger"] == "celery.banner"]
    assert banner["message"].startswith("celery beat is starting.")
    assert any(line["message"] == "beat: Starting..." for line in lines)


def test_beats_per_run_line_is_debug() -> None:
    from registry.logs.celery_output import BeatTicksFilter

    beat = logging.getLogger("celery.beat")
    assert any(isinstance(f, BeatTicksFilter) for f in beat.filters)
    tick = logging.LogRecord(
        "celery.beat", logging.INFO, "", 0, "Scheduler: Sending due task %s (%s)", ("a", "b"), None
    )
    other = logging.LogRecord("celery.beat", logging.INFO, "", 0, "beat: Starting...", (), None)
    previous = beat.level
    beat.setLevel(logging.INFO)
    try:
        assert not BeatTicksFilter().filter(tick) and tick.levelname == "DEBUG"
        assert BeatTicksFilter().filter(other) and other.levelname == "INFO"
    finally:
        beat.setLevel(previous)


def test_the_image_gives_granian_the_log_configuration() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "WORKDIR /app" in text
    assert "ENV GRANIAN_LOG_CONFIG=/app/granian-logging.json" in text
    config = json.loads((ROOT / "granian-logging.json").read_text())
    assert config["formatters"]["registry"]["()"] == "granian_logging.formatter"

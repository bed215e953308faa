"""The periodic schedule, run inside the server when no beat runs it (``make run``, issue 39).

With nothing configured (no ``REDIS_URL`` or ``CELERY_BROKER_URL``) tasks run in-process and
there is no Celery beat, so nothing would ever run the sweeps: a page saying "next try 19:28
UTC" would promise a retry that never comes. Here one daemon thread of the serving process runs
``CELERY_BEAT_SCHEDULE`` itself, by task name, through the same Celery tasks beat sends (the
crawl sweep, the live checks' sweep, pruning, the vector index snapshot): each entry first one
interval after the server starts, then every interval, one at a time, a failure logged and the
next run kept.

It starts with the ASGI lifespan (:func:`with_schedule` wraps the application in
``registry.asgi``), so only a server runs it: never a management command, a worker, a test that
imports the application, or a server with a broker (there ``make beat`` runs the schedule).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.db import close_old_connections

from registry.celery import app

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def wanted() -> bool:
    """Whether this server must run the schedule: tasks run in-process and no broker is
    configured, so no beat can be running (the no-configuration mode of ``make run``)."""
    return bool(settings.CELERY_TASK_ALWAYS_EAGER) and not settings.CELERY_BROKER_URL


def intervals(schedule: dict[str, dict[str, Any]]) -> dict[str, tuple[str, float]]:
    """Each entry's task name and interval in seconds; an entry on another kind of schedule
    (a crontab) is left to a real beat, and said so."""
    out: dict[str, tuple[str, float]] = {}
    for name, entry in schedule.items():
        every = entry.get("schedule")
        if isinstance(every, dt.timedelta):
            every = every.total_seconds()
        if isinstance(every, int | float) and every > 0:
            out[name] = (str(entry["task"]), float(every))
        else:
            logger.warning("schedule entry %s is not an interval: not run in-process", name)
    return out


class InProcessSchedule:
    """A thread running each entry's task every interval until :meth:`stop`."""

    def __init__(
        self,
        schedule: dict[str, dict[str, Any]],
        *,
        run: Callable[[str], None] | None = None,
    ) -> None:
        self.entries = intervals(schedule)
        self.run = run or run_task
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is not None or not self.entries:
            return
        self.thread = threading.Thread(target=self._loop, name="schedule-in-process", daemon=True)
        self.thread.start()
        logger.info(
            "running the periodic schedule in-process: %s",
            ", ".join(f"{task} every {every:g} s" for task, every in self.entries.values()),
        )

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout)

    def _loop(self) -> None:
        started = time.monotonic()
        due = {name: started + every for name, (_, every) in self.entries.items()}
        while not self.stopping.is_set():
            name = min(due, key=due.__getitem__)
            if self.stopping.wait(max(0.0, due[name] - time.monotonic())):
                return
            task, every = self.entries[name]
            self.run(task)
            # The next run one interval after this one was due, never a burst to catch up.
            due[name] = max(due[name] + every, time.monotonic())


def run_task(task: str) -> None:
    """Run one task by name in this thread, as a worker would; a failure is logged."""
    close_old_connections()
    try:
        if task not in app.tasks:  # the apps' task modules, as a worker imports them
            app.loader.import_default_modules()
        result = app.tasks[task].apply()
        if result.failed():
            logger.error("in-process %s failed:\n%s", task, result.traceback)
    except Exception:  # the schedule goes on: the next run may succeed
        logger.exception("in-process %s failed", task)
    finally:
        close_old_connections()


def with_schedule(application: App) -> App:
    """``application`` that also runs the schedule from its lifespan's startup to its shutdown,
    when :func:`wanted` (otherwise ``application`` itself)."""
    if not wanted():
        return application

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await application(scope, receive, send)
            return
        schedule = InProcessSchedule(settings.CELERY_BEAT_SCHEDULE)

        async def watched() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup":
                schedule.start()
            elif message["type"] == "lifespan.shutdown":
                schedule.stop()
            return message

        try:
            await application(scope, watched, send)
        finally:
            schedule.stop()

    return serve

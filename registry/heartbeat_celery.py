"""Where the worker and the beat write their heartbeats (registry/heartbeat.py).

* **The worker**: a bootstep of the worker's blueprint starts a heartbeat thread in the main
  process when the worker starts (before it connects to the broker, so a worker waiting for an
  absent Redis is still seen running) and stops it when the worker shuts down. A thread rather
  than the worker's event-loop timer: that loop does not turn while the consumer reconnects to
  the broker or while the solo pool runs a task, and neither makes the worker unhealthy.
* **The beat**: :class:`HeartbeatScheduler` (``beat_scheduler``, set in registry/celery.py) is
  Celery's persistent scheduler writing the heartbeat after each pass over the schedule, and
  passing at least every heartbeat interval, so a beat stuck in a pass goes stale.
"""

from __future__ import annotations

import time
from typing import Any

from celery import bootsteps
from celery.beat import PersistentScheduler

# registry.heartbeat is imported where it is used (lazy): every process imports this module
# (through registry.celery), and `python -m registry.heartbeat` must find that module not yet
# imported.

SCHEDULER = "registry.heartbeat_celery:HeartbeatScheduler"


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Writes the worker's heartbeat from its main process while the worker runs."""

    label = "Heartbeat"

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.beater: Any = None

    def start(self, parent: Any) -> None:
        from registry.heartbeat import Beater  # lazy: `python -m registry.heartbeat` runs it

        self.beater = Beater("worker")
        self.beater.start()

    def stop(self, parent: Any) -> None:
        if self.beater is not None:
            self.beater.stop()
            self.beater = None

    shutdown = stop


class HeartbeatScheduler(PersistentScheduler):
    """Celery's default scheduler (the schedule kept in ``--schedule``'s file), writing the
    beat's heartbeat after each pass."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from registry.heartbeat import Beater, interval  # lazy: `python -m registry.heartbeat`

        super().__init__(*args, **kwargs)
        self.heartbeat_seconds = interval()
        # Pass at least once a heartbeat interval, even when nothing is due sooner.
        settled: float = vars(self)["max_interval"]  # set by Scheduler.__init__
        self.max_interval = min(settled, self.heartbeat_seconds)
        self._beater = Beater("beat", self.heartbeat_seconds)
        self._last_beat = 0.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        interval = float(super().tick(*args, **kwargs))
        now = time.monotonic()
        if now - self._last_beat >= 0.5:  # passes come in bursts when much is due
            self._beater.beat()
            self._last_beat = now
        return interval


def install(app: Any) -> None:
    """Add the worker's heartbeat step and make the beat's scheduler write one."""
    app.steps["worker"].add(WorkerHeartbeat)
    app.conf.update(beat_scheduler=SCHEDULER)

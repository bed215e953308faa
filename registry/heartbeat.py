"""Heartbeat files of the worker and the beat, and the check an orchestrator runs on them.

A Celery worker and the beat serve no HTTP, so an orchestrator cannot probe them like a web
node's ``/readyz``. Instead each writes a heartbeat: a small file holding the Unix time it was
written (and the writer's pid), ``<REGISTRY_HEARTBEAT_DIR>/<kind>-<hostname>``, every
``REGISTRY_HEARTBEAT_SECONDS`` (15 by default). The worker writes from a thread of its main
process that a bootstep starts and stops; the beat writes at each pass of its scheduler, so a
beat stuck in a pass goes stale (registry/heartbeat_celery.py). A file needs no Redis: the
heartbeat says the process runs whatever its broker does (``registry_dependency_up`` and the
alerts say that, docs/operations.md).

The check, for a container's ``healthcheck`` (docker-compose.yml) or a Kubernetes exec probe,
runs without Django or Celery being set up::

    python -m registry.heartbeat check worker [--max-age 60]

It exits 0 when this host's file of that kind was written at most ``--max-age`` seconds ago
(by default the larger of 60 and four heartbeat intervals), and 1 with a one-line reason on
standard error when it is older, missing or unreadable. Only the standard library is used here.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

logger = logging.getLogger(__name__)

KINDS = ("worker", "beat")
DEFAULT_SECONDS = 15.0
DEFAULT_MAX_AGE = 60.0


def directory() -> Path:
    """Where the heartbeat files are (``REGISTRY_HEARTBEAT_DIR``, else the system temp dir)."""
    configured = os.environ.get("REGISTRY_HEARTBEAT_DIR", "").strip()
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / "a2a-registry-heartbeats"


def interval() -> float:
    """Seconds between two heartbeats (``REGISTRY_HEARTBEAT_SECONDS``, 15 by default)."""
    raw = os.environ.get("REGISTRY_HEARTBEAT_SECONDS", "").strip()
    if not raw:
        return DEFAULT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"REGISTRY_HEARTBEAT_SECONDS must be a number (got {raw!r})") from None
    if not seconds > 0:
        raise ValueError(f"REGISTRY_HEARTBEAT_SECONDS must be above 0 (got {raw!r})")
    return seconds


def default_max_age() -> float:
    """How old a heartbeat may be by default: four intervals, and at least a minute."""
    return max(DEFAULT_MAX_AGE, 4 * interval())


def path(kind: str, host: str | None = None) -> Path:
    """The heartbeat file of ``kind`` (worker, beat) on ``host`` (this one by default)."""
    if kind not in KINDS:
        raise ValueError(f"unknown process kind {kind!r} (one of {', '.join(KINDS)})")
    return directory() / f"{kind}-{host or socket.gethostname()}"


def write(kind: str, now: float | None = None) -> Path:
    """Write this process's heartbeat of ``kind`` now (atomically: a reader never sees half)."""
    target = path(kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.time() if now is None else now
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    partial.write_text(f"{stamp:.3f} {os.getpid()}\n")
    os.replace(partial, target)
    return target


def written_at(kind: str, host: str | None = None) -> float:
    """When the heartbeat of ``kind`` was last written (Unix time); OSError or ValueError when
    there is none or it cannot be read."""
    text = path(kind, host).read_text()
    return float(text.split()[0])


def problem(kind: str, max_age: float, host: str | None = None) -> str | None:
    """Why the heartbeat of ``kind`` is not fresh (one line), or None when it is."""
    where = path(kind, host)
    try:
        stamp = written_at(kind, host)
    except FileNotFoundError:
        return f"{kind} heartbeat missing: no {where}"
    except (OSError, ValueError, IndexError) as exc:
        return f"{kind} heartbeat unreadable: {where}: {exc.__class__.__name__}"
    age = time.time() - stamp
    if age > max_age:
        return f"{kind} heartbeat stale: written {age:.0f} s ago (max {max_age:g} s) in {where}"
    return None


class Beater:
    """A daemon thread that writes one heartbeat now and then every :func:`interval` seconds
    until :meth:`stop`. A failed write (a full or read-only disk) is logged once as a warning,
    not at every beat, and the next beat tries again."""

    def __init__(self, kind: str, seconds: float | None = None) -> None:
        self.kind = kind
        self.seconds = interval() if seconds is None else seconds
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False

    def beat(self) -> None:
        try:
            write(self.kind)
        except OSError as exc:
            if not self._failing:
                logger.warning("%s heartbeat not written to %s: %s", self.kind, directory(), exc)
            self._failing = True
            return
        if self._failing:
            logger.warning("%s heartbeat written again to %s", self.kind, directory())
        self._failing = False

    def _run(self) -> None:
        main = threading.main_thread()
        while main.is_alive():
            self.beat()
            if self._stopped.wait(self.seconds):
                return

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"{self.kind}-heartbeat", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m registry.heartbeat",
        description="Exit 0 when this host's worker or beat heartbeat is fresh, 1 otherwise.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check a heartbeat's age")
    check.add_argument("kind", choices=KINDS)
    check.add_argument(
        "--max-age",
        type=float,
        default=None,
        help="seconds (default: the larger of 60 and four REGISTRY_HEARTBEAT_SECONDS)",
    )
    check.add_argument("--host", default=None, help="whose file (default: this host's name)")
    args = parser.parse_args(argv)
    try:
        max_age = default_max_age() if args.max_age is None else args.max_age
    except ValueError as exc:
        print(f"heartbeat check: {exc}", file=sys.stderr)
        return 1
    reason = problem(args.kind, max_age, args.host)
    if reason is not None:
        print(reason, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

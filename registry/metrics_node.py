"""Series a scrape reads about the node and its broker: build, processes, queues, beat.

Added to every scrape by registry/metrics_exposition.py (web ``/metrics`` and the worker's own
server):

* ``registry_build_info{version, commit}`` = 1: the package's version and the commit, from
  ``REGISTRY_COMMIT`` or, when unset, ``git rev-parse HEAD`` run once (``unknown`` without);
* with ``PROMETHEUS_MULTIPROC_DIR``, each live process of the node (the pids whose files are
  in the directory, and the scraping process): ``process_cpu_seconds_total``,
  ``process_resident_memory_bytes``, ``process_virtual_memory_bytes`` and
  ``process_start_time_seconds``, labelled ``pid``, read from ``/proc/<pid>`` now.
  prometheus_client's own ProcessCollector sees only the process answering, so it is off in
  that mode; reading ``/proc`` of the node's pids covers every worker (same machine or
  container) without any process having to write anything. Without the directory (one
  process) the client's own ``process_*`` series stand, unlabelled;
* ``registry_celery_queue_length{queue}``: tasks waiting in the broker (Redis lists, every
  priority step of each queue added up), read with a 0.5 s timeout; absent when the broker is
  not Redis or does not answer;
* ``registry_beat_last_sent_timestamp_seconds{schedule}``: when beat last sent each schedule
  entry's task (registry/metrics_tasks.py keeps them in Redis); absent until beat has run.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

import registry.metrics as metrics

logger = logging.getLogger(__name__)

REDIS_TIMEOUT_SECONDS = 0.5
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
PRIORITY_STEPS = 10  # settings.CELERY_BROKER_TRANSPORT_OPTIONS' priority_steps: 0..9


@cache
def build() -> tuple[str, str]:
    """(version, commit) of the code this process runs."""
    try:
        version = metadata.version("agent-card-registry")
    except metadata.PackageNotFoundError:  # run from a checkout: its pyproject.toml
        try:
            project = tomllib.loads(PYPROJECT.read_text())["project"]
            version = str(project["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            version = "unknown"
    commit = os.environ.get("REGISTRY_COMMIT", "").strip()
    if not commit:
        try:
            done = subprocess.run(
                ["git", "rev-parse", "HEAD"],
                cwd=Path(__file__).resolve().parent,
                capture_output=True,
                text=True,
                timeout=2,
                check=False,
            )
            commit = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            commit = ""
    return version, commit[:40] or "unknown"


def build_info() -> Metric:
    version, commit = build()
    family = GaugeMetricFamily(
        "registry_build_info",
        "The registry's version and commit on this node (always 1).",
        labels=["version", "commit"],
    )
    family.add_metric([version, commit], 1.0)
    return family


# --- processes --------------------------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return 0.0


def node_pids(directory: str) -> set[int]:
    """The pids with files in the metrics directory, and this process's."""
    pids = {os.getpid()}
    for path in Path(directory).glob("*.db"):
        tail = path.stem.rsplit("_", 1)[-1]
        if tail.isdigit():
            pids.add(int(tail))
    return pids


def process_stats(pid: int) -> tuple[float, float, float, float] | None:
    """(cpu seconds, resident bytes, virtual bytes, start time) of ``pid``; None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    # fields[0] is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24
    cpu = (int(fields[11]) + int(fields[12])) / _TICKS
    start = _boot_time() + int(fields[19]) / _TICKS
    return cpu, float(int(fields[21]) * _PAGE), float(fields[20]), start


def process_families(directory: str) -> list[Metric]:
    cpu = CounterMetricFamily(
        "process_cpu_seconds_total",
        "User and system CPU time of one process of this node, in seconds.",
        labels=["pid"],
    )
    rss = GaugeMetricFamily(
        "process_resident_memory_bytes", "Resident memory of one process.", labels=["pid"]
    )
    vsize = GaugeMetricFamily(
        "process_virtual_memory_bytes", "Virtual memory of one process.", labels=["pid"]
    )
    start = GaugeMetricFamily(
        "process_start_time_seconds", "When one process started (Unix time).", labels=["pid"]
    )
    for pid in sorted(node_pids(directory)):
        found = process_stats(pid)
        if found is None:
            continue
        label = [str(pid)]
        cpu.add_metric(label, found[0])
        rss.add_metric(label, found[1])
        vsize.add_metric(label, found[2])
        start.add_metric(label, found[3])
    return [cpu, rss, vsize, start]


# --- broker -----------------------------------------------------------------------------------


class _Client:
    value: Any = None
    url: str | None = None


def _redis(url: str) -> Any:
    if _Client.value is None or _Client.url != url:
        # lazy: redis-py only where a Redis URL is set (45 ms of start-up otherwise)
        import redis

        _Client.value = redis.Redis.from_url(
            url,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            retry_on_timeout=False,
        )
        _Client.url = url
    return _Client.value


def queue_keys(queue: str, sep: str = ":") -> list[str]:
    """kombu's Redis lists of one queue: one per priority step (step 0 is the queue's name)."""
    return [queue] + [f"{queue}{sep}{step}" for step in range(1, PRIORITY_STEPS)]


def broker_families() -> Iterator[Metric]:
    """Queue lengths and beat's last runs from Redis, one round trip; nothing when away."""
    # lazy: registry.celery imports this module before Django is set up
    from django.conf import settings

    url = settings.CELERY_BROKER_URL
    if (
        settings.CELERY_TASK_ALWAYS_EAGER
        or not url
        or not url.startswith(("redis://", "rediss://"))
    ):
        return
    # lazy: registry.celery imports this module before its app exists
    from celery import current_app

    # lazy: registry.celery imports this module; metrics_tasks needs its app
    import registry.metrics_tasks as metrics_tasks

    queues = sorted({current_app.conf.task_default_queue or "celery"})
    sep = str(settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("sep", ":"))
    try:
        with _redis(url).pipeline(transaction=False) as pipe:
            for queue in queues:
                for key in queue_keys(queue, sep):
                    pipe.llen(key)
            pipe.hgetall(metrics_tasks.BEAT_KEY)
            replies = pipe.execute()
    except Exception as exc:  # Redis away: the dependency gauge and its alert say so
        logger.debug("broker series skipped: %s", exc)
        return
    lengths = GaugeMetricFamily(
        "registry_celery_queue_length",
        "Tasks waiting in the broker's queue (every priority), registry-wide: aggregate with max.",
        labels=["queue"],
    )
    for at, queue in enumerate(queues):
        lengths.add_metric(
            [queue], float(sum(replies[at * PRIORITY_STEPS : (at + 1) * PRIORITY_STEPS]))
        )
    yield lengths
    sent = replies[-1] or {}
    if sent:
        family = GaugeMetricFamily(
            "registry_beat_last_sent_timestamp_seconds",
            "When beat last sent a schedule entry's task (Unix time), by entry name.",
            labels=["schedule"],
        )
        for name, value in sorted(sent.items()):
            family.add_metric([name.decode()], float(value))
        yield family


def families() -> list[Metric]:
    """Every family of this module for one scrape."""
    out: list[Metric] = [build_info()]
    if metrics.MULTIPROCESS_DIR:
        try:
            out.extend(process_families(metrics.MULTIPROCESS_DIR))
        except OSError as exc:  # no /proc (not Linux)
            logger.debug("process series skipped: %s", exc)
    out.extend(broker_families())
    return out

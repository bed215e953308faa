"""What a scrape answers: this node's processes, each counted once, and gauges read now.

Two sources make one exposition, for ``/metrics`` (registry/metrics_view.py) and for the Celery
worker's own server (registry/metrics_worker.py):

* **the processes' series**. Without ``PROMETHEUS_MULTIPROC_DIR`` (``make run``, tests) it is
  this process's registry. With it, every process of the node (web workers, Celery's prefork
  children) has written its values to its own files in that directory, named by its pid, and
  :class:`~prometheus_client.multiprocess.MultiProcessCollector` adds them up: a counter is the
  sum over the files, so each increment, made once by the one process that did the work, is
  counted once whichever process answers the scrape. Before reading, the files of processes
  that are gone from this node are marked dead (their ``live*`` gauges dropped, their counters
  kept), which covers servers without a hook for it (granian) and children killed outright;
* **gauges computed at scrape time** by the collectors the apps registered
  (:data:`registry.metrics.SCRAPE_COLLECTORS`: the crawl schedule's lag, the embedding backlog),
  and the vector snapshot's age, derived from the processes' snapshot timestamps. A collector
  that fails or is late (its database or Redis is down) answers the values it read last and
  is logged once; the whole scrape answers within a second;
* **the node and its broker** (registry/metrics_node.py): build info, each process's CPU and
  memory, the Celery queue's length, beat's last runs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

import registry.metrics as metrics
import registry.metrics_node as metrics_node

logger = logging.getLogger(__name__)

SNAPSHOT_BUILT = "registry_vector_snapshot_built_timestamp_seconds"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sweep_dead(directory: str) -> list[int]:
    """Mark the processes whose ``live*`` gauge files are in ``directory`` but which no longer
    run on this node as dead; returns their pids. (A pid taken again by a new process keeps
    the old one's gauges until that process writes its own: the same values, overwritten.)"""
    pids: set[int] = set()
    for path in Path(directory).glob("gauge_live*_*.db"):
        tail = path.stem.rsplit("_", 1)[-1]
        if tail.isdigit():
            pids.add(int(tail))
    gone = sorted(pid for pid in pids if pid != os.getpid() and not _alive(pid))
    for pid in gone:
        mark_process_dead(pid, directory)
    return gone


def process_families() -> list[Metric]:
    """The series every process keeps: this node's, added up, or this process's own."""
    directory = metrics.MULTIPROCESS_DIR
    if directory is None:
        return list(REGISTRY.collect())
    sweep_dead(directory)
    return list(MultiProcessCollector(None, directory).collect())


def snapshot_age(families: Iterable[Metric], now: float) -> Metric | None:
    """``registry_vector_snapshot_age_seconds``: how old the oldest vector snapshot served by a
    live process of this node is (None when no process serves one)."""
    built = [
        sample.value
        for family in families
        if family.name == SNAPSHOT_BUILT
        for sample in family.samples
        if sample.value > 0
    ]
    if not built:
        return None
    return GaugeMetricFamily(
        "registry_vector_snapshot_age_seconds",
        "Seconds since the oldest vector index snapshot served by a live process of this node "
        "was built (searches read newer vectors from the database on top of it).",
        value=max(0.0, now - min(built)),
    )


# Every scrape answers within a second whatever is down (Prometheus' timeout is 10 s): each
# registered collector runs in a thread of a small pool and is waited for until a shared
# deadline; one that is late or fails answers what it read last in this process (nothing if it
# never read), so a gauge such as the crawl lag does not vanish, and its alert go quiet, during
# a database outage. A collector still running from an earlier scrape is not started again.
# A collector with ``bounded = True`` keeps its own deadline and is asked in the scrape's
# thread, its answer never replaced by an earlier one (registry/health.py's dependency gauge:
# late means down).
COLLECT_DEADLINE_SECONDS = 0.8
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="metrics-collect")
_last_read: dict[int, list[Metric]] = {}
_running: dict[int, Future[list[Metric]]] = {}
_failing: set[int] = set()


def _collect_in_thread(collector: Collector) -> list[Metric]:
    # lazy: needs Django set up; scrapes run after start-up
    from django.db import connections

    try:
        return list(collector.collect())
    finally:
        connections.close_all()  # a collector's Django connection is not kept by a pool thread


def _settle(key: int, name: str, future: Future[list[Metric]]) -> None:
    """Keep a finished collector's families, or log its failure once until it recovers."""
    try:
        _last_read[key] = future.result()
    except Exception as exc:  # a database or Redis outage must not take the rest down
        if key not in _failing:
            _failing.add(key)
            logger.warning(
                "metrics collector %s failed (%s): its last values are answered until it recovers",
                name,
                type(exc).__name__,
            )
        return
    if key in _failing:
        _failing.discard(key)
        logger.info("metrics collector %s reads again", name)


def _bounded(collector: Collector) -> list[Metric]:
    try:
        return list(collector.collect())
    except Exception as exc:
        logger.warning("metrics collector %s failed (%s)", type(collector).__name__, exc)
        return []


def scraped_families(deadline: float = COLLECT_DEADLINE_SECONDS) -> list[Metric]:
    """What the registered scrape-time collectors read, within ``deadline`` seconds in all."""
    started = time.monotonic()
    collectors = [c for c in metrics.SCRAPE_COLLECTORS if not getattr(c, "bounded", False)]
    for collector in collectors:
        key = id(collector)
        if key not in _running:
            _running[key] = _pool.submit(_collect_in_thread, collector)
    out: list[Metric] = []
    for collector in metrics.SCRAPE_COLLECTORS:
        if getattr(collector, "bounded", False):
            # It answers within its own deadline, and what a late check means is its own
            # business (a dependency that does not answer is down, not as it last was).
            out.extend(_bounded(collector))
    pending = {_running[id(collector)] for collector in collectors}
    wait(pending, timeout=max(0.0, deadline - (time.monotonic() - started)))
    for collector in collectors:
        key = id(collector)
        future = _running[key]
        if future.done():
            del _running[key]
            _settle(key, type(collector).__name__, future)
        elif key not in _failing:
            _failing.add(key)
            logger.warning(
                "metrics collector %s is late: its last values are answered until it reads",
                type(collector).__name__,
            )
        out.extend(_last_read.get(key, []))
    return out


class NodeCollector:
    """Every family of one scrape of this node (see the module's docstring)."""

    def collect(self) -> Iterable[Metric]:
        families = process_families()
        age = snapshot_age(families, time.time())
        if age is not None:
            families.append(age)
        families.extend(scraped_families())
        families.extend(metrics_node.families())
        return families


def node_registry() -> CollectorRegistry:
    """A registry that collects :class:`NodeCollector`. Nothing is described up front (the
    families are known only when scraped), so it is kept as a collector without names, which
    a scrape filtered by ``name[]`` still asks."""
    registry = CollectorRegistry(auto_describe=False, support_collectors_without_names=True)
    registry.register(NodeCollector())
    return registry


def exposition() -> bytes:
    """The text exposition format (0.0.4) of one scrape."""
    return generate_latest(node_registry())

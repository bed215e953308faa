"""The failure drills' registry: a web node, a worker and beat as production runs them, and a
client that keeps count of every answer it got.

* web: granian (the image's command: two workers, behind ``python -m registry.metrics_dir``)
  with its own metrics directory, ``/metrics`` scraped through the client;
* worker: Celery's prefork pool with its own metrics directory and server
  (``REGISTRY_METRICS_PORT``), scraped directly (not Django: nothing there is counted);
* beat, sending the crawl sweep every 2 s, so that its last run is seen move.

Every process logs JSON (``REGISTRY_LOG_FORMAT=json``, granian's own lines through
granian-logging.json) into its file in the test's directory; heartbeats every second into a
directory of the test's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tests.faults.services import ROOT, Registry, port_open, wait_until
from tests.metrics.scraping import Samples, parse
from tests.support import free_port

BY_STATUS = "django_http_responses_total_by_status_total"
BY_STATUS_VIEW = "django_http_responses_total_by_status_view_method_total"


class Ledger:
    """An HTTP client of the web node that keeps every answer it got, by status, and every
    request that got none."""

    def __init__(self, base: str, startup: Counter[int]) -> None:
        self.client = httpx.Client(base_url=base, timeout=15)
        self.by_status: Counter[int] = Counter(startup)  # serve()'s wait for /healthz
        self.unanswered: list[str] = []

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            self.unanswered.append(f"{method} {path}: {exc.__class__.__name__}: {exc}")
            return None
        self.by_status[response.status_code] += 1
        return response

    def total(self) -> int:
        return sum(self.by_status.values())

    def close(self) -> None:
        self.client.close()


def counted_by_status(samples: Samples, name: str = BY_STATUS) -> Counter[int]:
    """What a scrape says was answered, by status (the series' sum over its other labels)."""
    out: Counter[int] = Counter()
    for (sample, labels), value in samples.items():
        if sample == name and value:
            out[int(dict(labels)["status"])] += int(value)
    return out


class DrillStack:
    """The processes of a drill on the private services (tests/faults/services.py)."""

    def __init__(self, stack: Registry, directory: Path) -> None:
        self.stack = stack
        self.directory = directory
        self.heartbeats = directory / "heartbeats"
        stack.env.update(
            REGISTRY_LOG_FORMAT="json",
            GRANIAN_LOG_CONFIG=str(ROOT / "granian-logging.json"),
            REGISTRY_HEARTBEAT_DIR=str(self.heartbeats),
            REGISTRY_HEARTBEAT_SECONDS="1",
            REGISTRY_SWEEP_INTERVAL_SECONDS="2",
        )
        self.worker_port = free_port()
        self.worker: subprocess.Popen[bytes] | None = None
        self.beat: subprocess.Popen[bytes] | None = None

    def start_web(self) -> str:
        granian = str(Path(sys.executable).with_name("granian"))
        return self.stack.serve(
            [sys.executable, "-m", "registry.metrics_dir", granian, "--interface", "rsgi",
             "--host", "127.0.0.1", "--port", "{port}", "--workers", "2", "--no-ws", "--http",
             "1", "--respawn-failed-workers", "registry.rsgi:application"],
            PROMETHEUS_MULTIPROC_DIR=str(self.directory / "web-metrics"),
        )  # fmt: skip

    def start_worker(self) -> None:
        self.worker = self.stack.worker(
            pool="prefork",
            PROMETHEUS_MULTIPROC_DIR=str(self.directory / "worker-metrics"),
            REGISTRY_METRICS_PORT=str(self.worker_port),
            REGISTRY_METRICS_ADDRESS="127.0.0.1",
        )
        if not wait_until(lambda: port_open(self.worker_port), timeout=60, step=0.2):
            raise RuntimeError(f"the worker's metrics server did not start; {self.stack.logs}")

    def stop_worker(self) -> None:
        assert self.worker is not None
        self.stack.stop(self.worker)
        self.worker = None

    def start_beat(self) -> None:
        self.beat = self.stack.beat()

    def stop_beat(self) -> None:
        assert self.beat is not None
        self.stack.stop(self.beat)
        self.beat = None

    @property
    def worker_metrics(self) -> str:
        return f"http://127.0.0.1:{self.worker_port}/metrics"

    def scrape_worker(self) -> Samples | None:
        try:
            response = httpx.get(self.worker_metrics, timeout=5)
        except httpx.HTTPError:
            return None
        return parse(response.text) if response.status_code == 200 else None

    def heartbeat_fresh(self, kind: str, max_age: float = 3.0) -> bool:
        """``python -m registry.heartbeat check`` as compose's healthcheck runs it."""
        done = subprocess.run(
            [sys.executable, "-m", "registry.heartbeat", "check", kind, "--max-age", str(max_age)],
            cwd=ROOT,
            env=self.stack.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.returncode == 0


def log_lines_not_json(directory: Path) -> list[str]:
    """Every line of the processes' logs (``*.log`` in ``directory``) that is not one JSON
    object, with its file and number."""
    bad: list[str] = []
    for path in sorted(directory.glob("*.log")):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            try:
                parsed = json.loads(line)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                bad.append(f"{path.name}:{number}: {line[:300]}")
    return bad


def wait_for(predicate: Any, what: str, timeout: float = 60) -> None:
    if not wait_until(predicate, timeout=timeout, step=0.5):
        raise AssertionError(f"timed out waiting for {what}")


def sleep_until(moment: float) -> None:
    delay = moment - time.time()
    if delay > 0:
        time.sleep(delay)

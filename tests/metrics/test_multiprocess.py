"""Several processes, one node, each increment counted once (PROMETHEUS_MULTIPROC_DIR).

* granian with two workers, started as the image starts it (the entrypoint empties the
  directory, then the command), and two more processes writing into the same directory: the
  workers' /metrics adds every process up once, drops the gauges of a process that has exited,
  and counts requests spread over both workers exactly;
* a real Celery worker with two prefork children crawling real cards: its main process serves
  the node's metrics on REGISTRY_METRICS_PORT, each crawl counted once, and its children mark
  themselves dead when it stops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from cards.models import Agent
from cards.tasks import crawl_agent
from tests.factories import minimal_card
from tests.metrics.scraping import Samples, parse, value, with_name
from tests.serving_commands import ROOT, granian_command, running, server_environment
from tests.support import CardServer, free_port
from tests.workers import wait_for, worker_logs

# A process of the node that is not a web worker: it counts crawls and serves a snapshot.
WRITER = """
import sys
from registry import metrics
metrics.CRAWLS.labels(outcome="stored").inc(int(sys.argv[1]))
metrics.VECTOR_SNAPSHOT_BUILT.set(float(sys.argv[2]))
print("written", flush=True)
sys.stdin.read()  # alive until its stdin closes
"""
HEALTHZ = {"view": "healthz", "transport": "http", "method": "GET"}
HEALTHZ_COUNT = "django_http_requests_total_by_view_transport_method_total"


def writer(env: dict[str, str], crawls: int, built: float) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(crawls), str(built)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "written"
    return process


def pids(samples: Samples, name: str) -> dict[str, float]:
    return {dict(labels)["pid"]: v for labels, v in with_name(samples, name).items()}


def test_every_process_of_a_web_node_is_counted_once(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_4242.db").write_bytes(b"left by an earlier run")
    port = free_port()
    env = server_environment(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(directory))
    # The image: ENTRYPOINT ["python", "-m", "registry.metrics_dir"] before its CMD.
    command = [sys.executable, "-m", "registry.metrics_dir", *granian_command(port)]
    with running(command, env, tmp_path / "server.log", port=port, booting="Started worker"):
        assert not (directory / "counter_4242.db").exists()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:

            def scrape() -> Samples:
                response = http.get("/metrics")
                assert response.status_code == 200, response.text[:300]
                return parse(response.text)

            now = time.time()
            staying = writer(env, 3, now - 100)
            leaving = writer(env, 4, now - 500)
            try:
                leaving.stdin.close()  # type: ignore[union-attr]
                leaving.wait(10)
                before = scrape()
                assert value(before, "registry_crawls_total", outcome="stored") == 7
                built = pids(before, "registry_vector_snapshot_built_timestamp_seconds")
                # The exited writer's gauge is gone; the live one's is there, and so is each
                # web worker's (0: it serves no snapshot): three live processes, one node.
                assert str(leaving.pid) not in built
                assert built[str(staying.pid)] == pytest.approx(now - 100)
                assert len(built) >= 3, built
                assert 99 <= value(before, "registry_vector_snapshot_age_seconds") < 130
                for _ in range(40):  # fresh connections: both workers answer some
                    assert http.get("/healthz", headers={"Connection": "close"}).status_code == 200
                after = scrape()
                assert (
                    value(after, HEALTHZ_COUNT, **HEALTHZ) - value(before, HEALTHZ_COUNT, **HEALTHZ)
                    == 40
                )
                assert value(after, "registry_crawls_total", outcome="stored") == 7
            finally:
                for process in (staying, leaving):
                    if process.poll() is None:
                        process.stdin.close()  # type: ignore[union-attr]
                        process.wait(10)
            gone = scrape()
            # Both writers exited: their counts stay, their gauges and the age go.
            assert value(gone, "registry_crawls_total", outcome="stored") == 7
            assert str(staying.pid) not in pids(
                gone, "registry_vector_snapshot_built_timestamp_seconds"
            )
            assert ("registry_vector_snapshot_age_seconds", frozenset()) not in gone
        # Requests went to more than one worker (the counters are per process, in files).
        writers = {str(staying.pid), str(leaving.pid)}
        served = [
            path
            for path in directory.glob("counter_*.db")
            if path.stem.split("_")[1] not in writers
        ]
        assert len(served) >= 2, sorted(p.name for p in directory.iterdir())


@pytest.mark.celery_worker
def test_a_worker_node_serves_its_childrens_crawls_counted_once(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    card_server: CardServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    directory = tmp_path / "worker-metrics"
    directory.mkdir()
    (directory / "counter_999999.db").write_bytes(b"left by an earlier run")
    (directory / "notes.txt").write_text("not prometheus_client's: left alone")
    port = free_port()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))  # what the worker inherits
    monkeypatch.setenv("REGISTRY_METRICS_PORT", str(port))
    worker = start_worker(pool="prefork", concurrency=2)
    base = f"http://127.0.0.1:{port}"

    def serving() -> bool:
        try:
            return httpx.get(base + "/metrics", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    assert wait_for(serving, 60), "the worker's metrics server did not answer"
    # Its metrics server starts before its pool and its consumer: tasks go once it is ready.
    assert wait_for(lambda: " ready." in worker_logs(tmp_path), 120), worker_logs(tmp_path)[-3000:]
    assert not (directory / "counter_999999.db").exists()
    assert (directory / "notes.txt").exists()
    ids = []
    for index in range(4):
        path = f"/card-{index}.json"
        card_server.serve(path, json.dumps(minimal_card(name=f"Counted {index}")).encode())
        agent = Agent.objects.create(url=card_server.url(path))
        ids.append(agent.pk)
        crawl_agent.delay(str(agent.pk))

    def crawled() -> bool:
        assert worker.poll() is None, "the worker exited early; see its log in tmp_path"
        return not Agent.objects.filter(pk__in=ids, status="pending").exists()

    if not wait_for(crawled, 120):
        rows = list(Agent.objects.filter(pk__in=ids).values_list("status", "last_error"))
        pytest.fail(f"crawls not done: {rows}\n{worker_logs(tmp_path)[-4000:]}")
    assert set(Agent.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"ok"}
    samples = parse(httpx.get(base + "/metrics", timeout=10).text)
    assert value(samples, "registry_crawls_total", outcome="stored") == 4
    assert value(samples, "registry_crawl_duration_seconds_count") == 4
    # The registry-wide gauges are read by the worker's own process too.
    assert ("registry_crawl_schedule_lag_seconds", frozenset()) in samples
    assert value(samples, "django_db_execute_total", alias="default", vendor="postgresql") > 0
    # Each crawl is a task run, by name and outcome (issue 46); the other outcomes and tasks
    # are there at 0 from the children's start.
    crawl = {"task": "cards.crawl_agent"}
    assert value(samples, "registry_tasks_total", outcome="succeeded", **crawl) == 4
    assert value(samples, "registry_task_duration_seconds_count", **crawl) == 4
    failed = frozenset({("task", "cards.sweep_due"), ("outcome", "failed")})
    assert samples[("registry_tasks_total", failed)] == 0
    # CPU and memory of each live process of the node, read from /proc: the main process and
    # both children.
    cpu = with_name(samples, "process_cpu_seconds_total")
    memory = with_name(samples, "process_resident_memory_bytes")
    assert len(cpu) >= 3 and set(cpu) == set(memory), sorted(cpu)
    assert all(dict(labels)["pid"].isdigit() for labels in cpu)
    assert all(size > 1_000_000 for size in memory.values())
    assert with_name(samples, "registry_build_info")
    # Stopped: each child marked itself dead on its way out, so no live gauge is left behind.
    worker.terminate()
    worker.wait(20)
    assert not list(directory.glob("gauge_live*.db")), sorted(os.listdir(directory))
    assert list(directory.glob("counter_*.db"))  # the counts stay, for a scrape until restart


@pytest.mark.django_db
def test_an_unreadable_collector_leaves_the_rest_of_the_scrape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from registry import metrics, metrics_exposition

    class Broken:
        def collect(self) -> Any:
            raise ConnectionError("the database went away")

    monkeypatch.setattr(metrics, "SCRAPE_COLLECTORS", [Broken(), *metrics.SCRAPE_COLLECTORS])
    samples = parse(metrics_exposition.exposition().decode())
    assert any(name.startswith("registry_") for name, _ in samples)

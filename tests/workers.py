"""Real Celery worker processes for end-to-end tests (fixtures shared by several modules)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

ROOT = Path(__file__).resolve().parents[1]


def redis_url() -> str:
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"


def redis_available(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def worker_env(url: str) -> dict[str, str]:
    database = django_settings.DATABASES["default"]
    return {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        ),
        "REDIS_URL": url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_SECRET_KEY": "test-only-secret",
        "REGISTRY_FETCH_ALLOW_HTTP": "true",
        "REGISTRY_FETCH_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "REGISTRY_CRAWL_RETRY_BASE_SECONDS": "0.5",
        "REGISTRY_ORIGIN_MIN_GAP_SECONDS": "0",
        # Live checks after crawls only where a test asks for them (start(live=True)).
        "REGISTRY_LIVE_CHECKS": "false",
    }


@pytest.fixture
def politeness_redis(settings: Any) -> Iterator[Any]:
    """The origin politeness counters (cards/politeness.py) in this xdist worker's own Redis
    database, emptied before and after; one slot an origin, no gap between crawls."""
    url = redis_url()
    if not redis_available(url):
        pytest.skip("Redis is not reachable; `make test` starts it")
    from cards import politeness

    settings.REDIS_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.REGISTRY_ORIGIN_CONCURRENCY = 1
    settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS = 0
    politeness._redis.cache_clear()
    client = politeness._redis()
    client.flushdb()
    yield client
    client.flushdb()
    politeness._redis.cache_clear()


@pytest.fixture
def start_worker(
    transactional_db: None, settings: Any, tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start real worker processes against Redis; the test process sends through the broker."""
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}; `make test` starts it")
    import redis

    redis.Redis.from_url(url).flushdb()
    workers: list[subprocess.Popen[bytes]] = []

    def start(
        pool: str = "solo", concurrency: int = 1, live: bool = False
    ) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(workers)}.log").open("wb")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "registry",
                "worker",
                f"--pool={pool}",
                f"--concurrency={concurrency}",
                "--loglevel=INFO",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                f"--hostname=w{len(workers)}@%h",
            ],
            cwd=ROOT,
            env={**worker_env(url), "REGISTRY_LIVE_CHECKS": "true" if live else "false"},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        workers.append(worker)
        return worker

    from registry.celery import app

    previous = (app.conf.task_always_eager, app.conf.broker_url)
    app.conf.task_always_eager = False
    app.conf.broker_url = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield start
    finally:
        app.conf.task_always_eager, app.conf.broker_url = previous
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()


@pytest.fixture
def celery_worker(start_worker: Callable[..., subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    return start_worker()


def worker_logs(directory: Path) -> str:
    """What the workers ``start_worker`` started in a test's ``tmp_path`` have logged so far."""
    logs = sorted(directory.glob("worker-*.log"))
    return "".join(path.read_text(errors="replace") for path in logs)


def wait_for(predicate: Callable[[], bool], timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def run_import(token: str, urls: list[str], timeout: float = 120) -> tuple[Any, bool]:
    """``POST /api/v1/imports`` of ``urls`` as the token's account, then wait for the job to
    complete: the job and whether it did in ``timeout`` seconds."""
    from rest_framework.test import APIClient

    from cards.models import ImportJob

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    created = client.post("/api/v1/imports", {"urls": urls}, format="json")
    assert created.status_code == 202, created.content
    job = ImportJob.objects.get(pk=created.json()["id"])

    def finished() -> bool:
        job.refresh_from_db()
        return job.status == ImportJob.Status.COMPLETED

    return job, wait_for(finished, timeout=timeout)

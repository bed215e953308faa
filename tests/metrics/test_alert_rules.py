"""The alerting rules (deploy/prometheus/alerts.yml) checked and unit-tested by Prometheus' own
``promtool``, and every series they use found in a real scrape of a running registry.

``promtool`` comes with Prometheus: on Debian and Ubuntu ``apt-get install prometheus``, else
the release archive from https://prometheus.io/download/ (PROMTOOL=/path/to/promtool). Without
it the promtool tests are skipped, saying so; the scrape test runs anyway.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from celery import current_app

from registry import metrics_tasks
from tests.metrics.scraping import parse
from tests.support import serving_asgi
from tests.workers import redis_available, redis_url

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
RULE_TESTS = Path(__file__).with_name("alert_rules_test.yml")
PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not found: `apt-get install prometheus` (Debian/Ubuntu) or the Prometheus "
    "release archive, or PROMTOOL=/path/to/promtool",
)
NAME = re.compile(r"\b((?:registry|django|process)_[a-z0-9_]+)\b")
# Series written only once something happened, each shown by a test of its own.
AFTER_AN_EVENT = {
    # a process serving a vector snapshot: tests/metrics/test_series.py
    "registry_vector_snapshot_age_seconds",
}
# Added by registry/health.py (issue 46, section 1), not by the metrics modules.
FROM_HEALTH = "registry_dependency_up"


def rule_expressions() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


@needs_promtool
def test_promtool_checks_the_rules() -> None:
    done = subprocess.run(
        [str(PROMTOOL), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


@needs_promtool
def test_promtool_unit_tests_of_the_rules_pass() -> None:
    done = subprocess.run(
        [str(PROMTOOL), "test", "rules", str(RULE_TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_rule_tests_use_only_series_the_rules_use() -> None:
    used = {name for expr in rule_expressions() for name in NAME.findall(expr)}
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    inputs = {
        series["series"].split("{", 1)[0] for test in tests for series in test["input_series"]
    }
    assert inputs <= used, inputs - used


@pytest.mark.django_db(transaction=True)
def test_every_series_the_rules_use_is_in_a_real_scrape(settings: Any) -> None:
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}; `make test` starts it")
    import redis

    redis.Redis.from_url(url).flushdb()
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the broker's queue is read
    settings.CELERY_BROKER_URL = settings.REDIS_URL = url
    metrics_tasks.init_worker_series()  # as a worker child does: the tasks' series at 0
    metrics_tasks._beat_started()  # this process sends one schedule entry, as beat does
    try:
        current_app.send_task("cards.sweep_due", priority=6)
    finally:
        metrics_tasks._Beat.running = False
    with serving_asgi() as base:
        httpx.get(base + "/api/v1/tags", timeout=10)  # an answer, so the request series exist
        text = httpx.get(base + "/metrics", timeout=10).text
    redis.Redis.from_url(url).flushdb()
    scraped = {name for name, _labels in parse(text)}
    used = {name for expr in rule_expressions() for name in NAME.findall(expr)}
    missing = used - scraped - AFTER_AN_EVENT
    if FROM_HEALTH in missing and FROM_HEALTH not in (ROOT / "registry" / "health.py").read_text():
        missing.discard(FROM_HEALTH)  # not yet written by registry/health.py: see the report
    assert not missing, sorted(missing)

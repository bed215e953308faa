"""The series added for on-call (issue 46, section 2), read back through /metrics: label sets
at 0 before their first event, tasks by name and outcome, the broker's queue length, beat's
last run per schedule entry, build info, and a scrape-time gauge that keeps its last value
while its source is away. (Per-process CPU and memory, and tasks run by a real worker's
children: tests/metrics/test_multiprocess.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from celery import current_app
from django.test import Client
from prometheus_client.core import GaugeMetricFamily

from registry import metrics, metrics_node, metrics_tasks
from tests.metrics.scraping import scrape, value, with_name
from tests.workers import redis_available, redis_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def http() -> Client:
    return Client(HTTP_HOST="127.0.0.1")


@pytest.fixture
def broker(settings: Any) -> Iterator[Any]:
    """The real Redis as the broker, emptied before and after."""
    url = redis_url()
    if not redis_available(url):
        pytest.skip(f"Redis is not reachable at {url}; `make test` starts it")
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    settings.CELERY_BROKER_URL = url
    settings.REDIS_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    yield client
    client.flushdb()


def test_closed_label_sets_are_scraped_at_zero_before_any_event(http: Client) -> None:
    samples = scrape(http)
    for limit in metrics.LIMITS:
        assert ("registry_limiter_refusals_total", frozenset({("limit", limit)})) in samples
    for door in metrics.SEARCH_DOORS:
        for mode in metrics.SEARCH_MODES:
            labels = frozenset({("door", door), ("mode", mode)})
            assert ("registry_searches_total", labels) in samples
    for outcome in metrics.CRAWL_OUTCOMES:
        assert ("registry_crawls_total", frozenset({("outcome", outcome)})) in samples
    refused = with_name(samples, "registry_trusted_exchanges_total")
    assert len(refused) == len(metrics.TRUSTED_REFUSALS) + 1


def test_a_task_run_is_counted_by_name_and_outcome_with_its_duration(http: Client) -> None:
    metrics_tasks.init_worker_series()
    before = scrape(http)
    assert ("registry_tasks_total", frozenset({("task", "live.sweep"), ("outcome", "failed")})) in (
        before
    )
    current_app.tasks["cards.prune_history"].apply()
    after = scrape(http)
    labels = {"task": "cards.prune_history"}
    assert (
        value(after, "registry_tasks_total", outcome="succeeded", **labels)
        - value(before, "registry_tasks_total", outcome="succeeded", **labels)
        == 1
    )
    assert (
        value(after, "registry_task_duration_seconds_count", **labels)
        - value(before, "registry_task_duration_seconds_count", **labels)
        == 1
    )
    assert metrics_tasks.task_label("made.up") == "other"


def test_the_queue_length_and_beats_last_runs_are_read_from_redis(
    http: Client, broker: Any
) -> None:
    assert value(scrape(http), "registry_celery_queue_length", queue="celery") == 0
    metrics_tasks._beat_started()
    try:
        # What beat does for "sweep-due-crawls": publish its task (priority 6: a list of its own).
        current_app.send_task("cards.sweep_due", priority=6)
        current_app.send_task("cards.prune_history")
    finally:
        metrics_tasks._Beat.running = False
    samples = scrape(http)
    assert value(samples, "registry_celery_queue_length", queue="celery") == 2
    sent = with_name(samples, "registry_beat_last_sent_timestamp_seconds")
    assert set(sent) == {
        frozenset({("schedule", "sweep-due-crawls")}),
        frozenset({("schedule", "prune-crawl-attempts")}),
    }


def test_without_its_broker_the_scrape_leaves_the_queue_out(http: Client, settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    metrics_node._Client.value = None
    samples = scrape(http)
    metrics_node._Client.value = None
    assert not with_name(samples, "registry_celery_queue_length")
    assert with_name(samples, "registry_build_info")


def test_build_info_names_the_version_and_commit(
    http: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics_node.build.cache_clear()
    monkeypatch.setenv("REGISTRY_COMMIT", "0123abcd")
    try:
        info = with_name(scrape(http), "registry_build_info")
    finally:
        metrics_node.build.cache_clear()
    assert list(info.values()) == [1.0]
    (labels,) = info
    assert dict(labels)["commit"] == "0123abcd"
    assert dict(labels)["version"] not in ("", "unknown")


def test_a_scrape_time_gauge_keeps_its_last_value_while_its_source_is_away(
    http: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Flaky:
        up = True

        def collect(self) -> Iterator[Any]:
            if not self.up:
                raise ConnectionError("the database went away")
            yield GaugeMetricFamily("registry_test_flaky_gauge", "A test gauge.", value=42.0)

    flaky = Flaky()
    monkeypatch.setattr(metrics, "SCRAPE_COLLECTORS", [flaky, *metrics.SCRAPE_COLLECTORS])
    assert value(scrape(http), "registry_test_flaky_gauge") == 42.0
    flaky.up = False
    assert value(scrape(http), "registry_test_flaky_gauge") == 42.0


def test_a_hung_collector_answers_within_a_second_with_its_last_value(
    http: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    release = threading.Event()

    class Hanging:
        hang = False

        def collect(self) -> Iterator[Any]:
            if self.hang:
                release.wait(30)  # a database that takes the connection and never answers
            yield GaugeMetricFamily("registry_test_hanging_gauge", "A test gauge.", value=7.0)

    hanging = Hanging()
    monkeypatch.setattr(metrics, "SCRAPE_COLLECTORS", [hanging, *metrics.SCRAPE_COLLECTORS])
    assert value(scrape(http), "registry_test_hanging_gauge") == 7.0
    hanging.hang = True
    try:
        for _ in range(2):  # the second scrape does not start it again
            started = time.monotonic()
            samples = scrape(http)
            # The collectors' deadline is 0.8 s (not the 30 s the hung one would take); the
            # margin is for a loaded machine (the suite runs beside itself), not for the scrape.
            assert time.monotonic() - started < 2.0
            assert value(samples, "registry_test_hanging_gauge") == 7.0
            assert with_name(samples, "registry_build_info")
    finally:
        release.set()


def test_a_bounded_collector_is_asked_in_the_scrape_and_never_answered_stale(
    http: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Bounded:
        bounded = True
        up = 1.0

        def collect(self) -> Iterator[Any]:
            yield GaugeMetricFamily("registry_test_bounded_gauge", "A test gauge.", value=self.up)

    bounded = Bounded()
    monkeypatch.setattr(metrics, "SCRAPE_COLLECTORS", [bounded, *metrics.SCRAPE_COLLECTORS])
    assert value(scrape(http), "registry_test_bounded_gauge") == 1.0
    bounded.up = 0.0
    assert value(scrape(http), "registry_test_bounded_gauge") == 0.0

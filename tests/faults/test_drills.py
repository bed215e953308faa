"""Failure drills (issue 46): PostgreSQL, Redis, the Celery worker and beat stopped in turn
under a live web node (granian, two workers), worker and beat (tests/faults/drill_stack.py).

Each drill scrapes the live processes' ``/metrics`` every 2 s, a few times with everything up
and then while one part is stopped, making requests to every kind of door between scrapes. It
shows that:

* the right alert of deploy/prometheus/alerts.yml fires on the series scraped, and no other
  outage alert does: the scrapes become a promtool unit test (tests/faults/drill_series.py),
  which ``promtool test rules`` runs (PostgreSQL down: RegistryPostgresqlDown; Redis down:
  RegistryRedisDown; worker down: RegistryWorkerDown, and RegistryScrapeFailing for its
  metrics server; beat down: RegistryBeatSilent);
* ``/readyz`` stays 200 (``degraded``) while Redis is stopped, and is 503 while PostgreSQL is;
* every answer the drill got is counted: at each scrape of the web node, its request series by
  status (``django_http_responses_total_by_status_total`` and the by-view one) add up to
  exactly the answers the drill's client received before it, per status: the scrapes of
  ``/metrics`` included, each web worker's warm-up request not (it is not traffic);
* every line every process wrote (web, worker, beat: their stdout and stderr) is one JSON
  object;
* the worker's and beat's heartbeat checks say fresh while they run and stale once stopped.

Without promtool the drills run and check all the rest, then skip saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.factories import minimal_card
from tests.faults import drill_series as series
from tests.faults.drill_series import Expected, Target, Timeline
from tests.faults.drill_stack import (
    BY_STATUS,
    BY_STATUS_VIEW,
    DrillStack,
    Ledger,
    counted_by_status,
    log_lines_not_json,
    sleep_until,
    wait_for,
)
from tests.faults.services import PrivatePostgres, PrivateRedis, Registry
from tests.metrics.scraping import Samples, parse, value, with_name
from tests.support import CardServer

pytestmark = pytest.mark.disruptive

PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool")
BEFORE = 3  # scrapes with everything up, at the start of each drill
DURING = 8  # scrapes while the part is stopped
WATCHED = [
    "RegistryPostgresqlDown",
    "RegistryRedisDown",
    "RegistryWorkerDown",
    "RegistryBeatSilent",
    "RegistryScrapeFailing",
]
WEB = Target("registry-web", "web:8000")
WORKER = Target("registry-worker", "worker:9100")


class Drills:
    """The drills' client, scrapes and findings."""

    def __init__(
        self, drill: DrillStack, base: str, token: str, agent: str, cards: CardServer
    ) -> None:
        self.drill = drill
        self.ledger = Ledger(base, drill.stack.startup_answers)
        self.token = token
        self.agent = agent
        self.cards = cards
        self.problems: list[str] = []
        self.timelines: list[Timeline] = []
        self.scrape_seconds: list[float] = []
        self.submitted = 0

    def tick(self, timeline: Timeline) -> None:
        """Scrape every process at the timeline's next slot; check the web's request series
        against the answers received before this scrape."""
        slot = timeline.slot_now(time.time())
        sleep_until(timeline.started + slot * series.STEP)
        expected = dict(self.ledger.by_status)
        started = time.monotonic()
        response = self.ledger.request("GET", "/metrics")
        self.scrape_seconds.append(time.monotonic() - started)
        web: Samples | None = None
        if response is not None and response.status_code == 200:
            web = parse(response.text)
            for name in (BY_STATUS, BY_STATUS_VIEW):
                counted = dict(counted_by_status(web, name))
                if counted != expected:
                    self.problems.append(
                        f"{timeline.name} slot {slot}: {name} says {counted}, the drill "
                        f"received {expected}"
                    )
        else:
            self.problems.append(f"{timeline.name} slot {slot}: the web's /metrics failed")
        timeline.record(slot, WEB.instance, web)
        timeline.record(slot, WORKER.instance, self.drill.scrape_worker())

    def traffic(self, phase: str, readiness: str) -> None:
        """One request to each kind of door, and ``/readyz`` (``readiness``: ready, degraded
        or not-ready)."""
        path = f"/drill-{self.submitted}.json"
        self.cards.serve(path, json.dumps(minimal_card(name=f"drill {self.submitted}")).encode())
        self.submitted += 1
        calls: list[tuple[str, str, dict[str, object]]] = [
            ("GET", "/api/v1/agents", {"params": {"q": "weather"}}),
            ("GET", "/api/v1/agents", {}),
            ("GET", f"/api/v1/agents/{self.agent}", {}),
            ("POST", "/api/v1/agents", {"json": {"url": self.cards.url(path)},
                                        "headers": {"Authorization": f"Token {self.token}"}}),
            ("POST", "/ard/search", {"json": {"query": {"text": "weather"}}}),
            ("GET", "/", {"params": {"q": "weather"}}),
            ("GET", "/no-such-page", {}),
            ("GET", "/healthz", {}),
        ]  # fmt: skip
        for method, where, options in calls:
            answer = self.ledger.request(method, where, **options)  # type: ignore[arg-type]
            if answer is not None and answer.status_code >= 500 and readiness != "not-ready":
                self.problems.append(f"{phase}: {method} {where} {answer.status_code}")
        ready = self.ledger.request("GET", "/readyz")
        got = (ready.status_code, ready.json().get("status")) if ready is not None else None
        wanted = {"ready": (200, "ready"), "degraded": (200, "degraded"), "not-ready": (503, 503)}
        if got != wanted[readiness]:
            self.problems.append(f"{phase}: /readyz {got}, expected {wanted[readiness]}")

    def run(
        self, name: str, stop: Callable[[], None], readiness: str, check: Callable[[], None]
    ) -> Timeline:
        """A drill: scrapes with everything up, ``stop``, scrapes while stopped (``check``
        after the fourth). The timeline ends with the outage (the part is restarted after)."""
        timeline = Timeline(name, time.time(), [WEB, WORKER])
        for _ in range(BEFORE):
            self.tick(timeline)
            self.traffic(name, "ready")
        stop()
        for count in range(DURING):
            self.tick(timeline)
            self.traffic(name, readiness)
            if count == 3:
                check()
        self.timelines.append(timeline)
        return timeline

    def ready_again(self) -> bool:
        answer = self.ledger.request("GET", "/readyz")
        if answer is None or answer.status_code != 200:
            return False
        return bool(answer.json()["status"] == "ready")


def _by_instance(timeline: Timeline, name: str, **labels: str) -> dict[int, dict[str, float]]:
    """Per slot, per instance, one series' value (absent: left out)."""
    out: dict[int, dict[str, float]] = {}
    for slot, scraped in timeline.scrapes.items():
        for instance, samples in scraped.items():
            if samples is not None and any(
                key == (name, frozenset(labels.items())) for key in samples
            ):
                out.setdefault(slot, {})[instance] = value(samples, name, **labels)
    return out


def _last_run_start(slots: list[int], holds: Callable[[int], bool]) -> int | None:
    """The first slot of the last run of slots (to the end) for which ``holds`` is true."""
    start = None
    for slot in sorted(slots, reverse=True):
        if not holds(slot):
            break
        start = slot
    return start


def dependency_alert(timeline: Timeline, dependency: str, alert: str) -> tuple[int, list[Expected]]:
    """Both nodes (the web's /metrics, the worker's server) say the dependency is down, from
    some scrape to the drill's end: the alert fires for each, a minute after the later."""
    seen = _by_instance(timeline, "registry_dependency_up", dependency=dependency)
    starts = []
    for target in (WEB, WORKER):
        start = _last_run_start(
            list(timeline.scrapes), lambda s, i=target.instance: seen.get(s, {}).get(i) == 0
        )
        assert start is not None, f"{target.instance} never said {dependency} down: {seen}"
        starts.append(start)
    begins = timeline.when(max(starts))
    at = series.first_evaluation_at_or_after(begins) + 60 + 2 * series.EVALUATION
    return at, [Expected(alert, WEB.instance), Expected(alert, WORKER.instance)]


def worker_alert(timeline: Timeline) -> tuple[int, list[Expected]]:
    finished = {
        slot: sum(with_name(scraped[WORKER.instance], "registry_tasks_total").values())
        for slot, scraped in timeline.scrapes.items()
        if scraped.get(WORKER.instance) is not None
    }
    slots = sorted(finished)
    increases = [b for a, b in zip(slots, slots[1:], strict=False) if finished[b] > finished[a]]
    last_increase = timeline.when(increases[-1]) if increases else 0.0

    def waiting(slot: int) -> float:
        scraped = timeline.scrapes[slot].get(WEB.instance) or {}
        return max(with_name(scraped, "registry_celery_queue_length").values(), default=0.0)

    start = _last_run_start(list(timeline.scrapes), lambda s: waiting(s) > 0)
    assert start is not None, "no task waited while the worker was stopped"
    begins = max(last_increase + 300, timeline.when(start))
    at = series.first_evaluation_at_or_after(begins) + 60 + 2 * series.EVALUATION
    return at, [
        Expected("RegistryWorkerDown", value=waiting(timeline.last_slot)),
        Expected("RegistryScrapeFailing", WORKER.instance, WORKER.job),
    ]


def beat_alert(timeline: Timeline) -> tuple[int, list[Expected]]:
    last = timeline.last(WEB.instance) or {}
    sent = value(last, "registry_beat_last_sent_timestamp_seconds", schedule="sweep-due-crawls")
    assert sent, "beat's last sweep is not in the web's last scrape"
    shifted = sent - timeline.started
    at = series.first_evaluation_at_or_after(shifted + 301) + 120 + 2 * series.EVALUATION
    return at, [Expected("RegistryBeatSilent", value=at - shifted)]


def test_failure_drills(
    stack: Registry,
    private_postgres: PrivatePostgres,
    private_redis: PrivateRedis,
    publisher_token: str,
    weather_agent: str,
    card_server: CardServer,
    tmp_path: Path,
) -> None:
    drill = DrillStack(stack, tmp_path)
    base = drill.start_web()
    drill.start_worker()
    drill.start_beat()
    drills = Drills(drill, base, publisher_token, weather_agent, card_server)
    wait_for(lambda: drill.heartbeat_fresh("beat") and drill.heartbeat_fresh("worker"), "beats")

    def sweep_seen() -> bool:
        scraped = drill.scrape_worker() or {}
        return bool(with_name(scraped, "registry_beat_last_sent_timestamp_seconds"))

    wait_for(sweep_seen, "beat's first sweep", timeout=90)

    def nothing() -> None:
        return None

    postgresql = drills.run("postgresql-down", private_postgres.stop, "not-ready", nothing)
    private_postgres.start()
    wait_for(drills.ready_again, "readiness after PostgreSQL")

    redis = drills.run("redis-down", private_redis.stop, "degraded", nothing)
    private_redis.start()
    wait_for(drills.ready_again, "readiness after Redis")

    def worker_stale() -> None:
        if drill.heartbeat_fresh("worker"):
            drills.problems.append("the worker's heartbeat is still fresh after it stopped")

    assert drill.heartbeat_fresh("worker")
    worker = drills.run("worker-down", drill.stop_worker, "ready", worker_stale)
    drill.start_worker()
    wait_for(lambda: drill.scrape_worker() is not None, "the worker again")

    def beat_stale() -> None:
        if drill.heartbeat_fresh("beat"):
            drills.problems.append("beat's heartbeat is still fresh after it stopped")

    assert drill.heartbeat_fresh("beat")
    beat = drills.run("beat-down", drill.stop_beat, "ready", beat_stale)
    stack.close()  # every process has written its last line
    drills.ledger.close()
    (tmp_path / "drills_scrapes.json").write_text(series.dump(drills.timelines))

    assert not drills.ledger.unanswered, drills.ledger.unanswered
    assert not drills.problems, "\n".join(drills.problems)
    assert max(drills.scrape_seconds) < 2.5, drills.scrape_seconds
    bad = log_lines_not_json(stack.logs)
    assert not bad, f"{len(bad)} log lines are not JSON:\n" + "\n".join(bad[:20])

    outcomes = {
        postgresql.name: dependency_alert(postgresql, "database", "RegistryPostgresqlDown"),
        redis.name: dependency_alert(redis, "redis", "RegistryRedisDown"),
        worker.name: worker_alert(worker),
        beat.name: beat_alert(beat),
    }
    groups = [
        series.promtool_group(timeline, *outcomes[timeline.name], WATCHED)
        for timeline in drills.timelines
    ]
    generated = tmp_path / "drills_alert_test.yml"
    generated.write_text(series.promtool_file(groups))
    summary = {
        name: {"eval_s": at, "firing": [(e.alert, e.instance, e.value) for e in expected]}
        for name, (at, expected) in outcomes.items()
    }
    print("drills:", json.dumps(summary), "answers:", dict(drills.ledger.by_status))
    if PROMTOOL is None:
        pytest.skip(
            "promtool not found (`make promtool`, or PROMTOOL=/path/to/promtool): the drills' "
            "readiness, counts, logs and heartbeats passed; their alerts were not evaluated"
        )
    done = subprocess.run(
        [PROMTOOL, "test", "rules", str(generated)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{generated}:\n{done.stdout}{done.stderr}"

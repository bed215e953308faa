"""What is not traffic, an error or a search is not counted as one (issue 46, section 3):

* each web worker's warm-up request (registry/serving.py), which granian's workers answer before
  serving: neither in the request series nor in the access log;
* a management command (compose's ``migrate`` in the web container): nothing written into the
  node's metrics directory (registry/metrics_dir.py);
* an identifier already taken, which a crawl handles by trying the next one: a unique conflict
  (``registry_db_unique_conflicts_total``), not a database error (registry/metrics_db.py);
* an unfiltered list: not a search (search/door_metrics.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client
from prometheus_client import REGISTRY

from cards.crawling import agent_crawl
from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.metrics.scraping import Samples, parse, scrape, value
from tests.serving_commands import ROOT, granian_command, server_environment
from tests.support import CardServer, free_port

BY_STATUS = "django_http_responses_total_by_status_total"


def _by_status(samples: Samples) -> dict[str, float]:
    return {
        dict(labels)["status"]: v
        for (name, labels), v in samples.items()
        if name == BY_STATUS and v
    }


def test_a_web_workers_warm_up_is_neither_counted_nor_logged(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    port = free_port()
    env = server_environment(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(directory))
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "registry.metrics_dir", *granian_command(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        # Each worker logs this once its warm-up request has been answered.
        while log.read_text().count("web worker ready") < 2:
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            first = http.get("/metrics")  # the first answer anyone got from this node
            assert first.status_code == 200, first.text[:300]
            assert _by_status(parse(first.text)) == {}
            for _ in range(3):
                assert http.get("/healthz", headers={"Connection": "close"}).status_code == 200
            after = http.get("/metrics")
        assert _by_status(parse(after.text)) == {"200": 4.0}  # the first scrape, 3 /healthz
    finally:
        server.terminate()
        server.wait(15)
    access = [line for line in log.read_text().splitlines() if "] GET healthz 200 " in line]
    assert len(access) == 3, log.read_text()[-3000:]


def test_a_management_command_writes_nothing_into_the_nodes_metrics(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    env = server_environment(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(directory))
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Applying cards.0001" in done.stdout  # it did run its hundreds of queries
    assert not directory.exists() or not list(directory.glob("*.db"))


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db
def test_an_identifier_taken_is_a_unique_conflict_not_a_database_error(
    card_server: CardServer, loopback_allowed: None
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the registry's counting cursor is PostgreSQL's (registry/postgresql)")
    where = {"alias": "default", "vendor": "postgresql"}
    errors = ("django_db_errors_total", {**where, "type": "UniqueViolation"})
    before = _sample(errors[0], **errors[1])
    conflicts = _sample("registry_db_unique_conflicts_total", **where)
    for index in range(3):  # one host, one card name: one derived ARD identifier
        url = card_server.serve(
            f"/same-{index}.json", json.dumps(minimal_card(name="Same")).encode()
        )
        agent = Agent.objects.create(url=url, card_url=url)
        assert agent_crawl(agent_id=agent.pk) == "stored"
    identifiers = set(Agent.objects.values_list("ard_identifier", flat=True))
    assert {i.rsplit(":", 1)[1] for i in identifiers if i} >= {"same", "same-2", "same-3"}
    # The second crawl found "same" taken, the third "same" and "same-2".
    assert _sample("registry_db_unique_conflicts_total", **where) - conflicts == 3
    assert _sample(errors[0], **errors[1]) == before
    # A statement the database refuses for another reason is still an error.
    syntax = ("django_db_errors_total", {**where, "type": "SyntaxError"})
    failed = _sample(syntax[0], **syntax[1])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELEC 1")
    assert _sample(syntax[0], **syntax[1]) == failed + 1


@pytest.fixture
def http() -> Client:
    return Client(HTTP_HOST="127.0.0.1")


def _searches(samples: Samples, door: str) -> float:
    return sum(
        v
        for (name, labels), v in samples.items()
        if name == "registry_searches_total" and dict(labels)["door"] == door
    )


@pytest.mark.django_db
def test_an_unfiltered_list_is_not_a_search(http: Client) -> None:
    agent_from_card(minimal_card(name="Listed", description="An agent in the list."))
    asked: list[tuple[str, str, dict[str, Any], float]] = [
        ("rest", "/api/v1/agents", {}, 0),
        ("rest", "/api/v1/agents", {"limit": "1", "mode": "lexical"}, 0),
        ("rest", "/api/v1/agents", {"q": "listed"}, 1),
        ("rest", "/api/v1/agents", {"tag": "nothing"}, 1),
        ("rest", "/api/v1/agents", {"verified": "maybe"}, 0),  # a 400: no search was made
        ("catalogue", "/", {}, 0),
        ("catalogue", "/", {"q": "listed"}, 1),
    ]
    for door, path, params, counted in asked:
        before = scrape(http)
        http.get(path, params)
        after = scrape(http)
        assert _searches(after, door) - _searches(before, door) == counted, (path, params)
        assert (
            value(after, "registry_search_duration_seconds_count", door=door)
            - value(before, "registry_search_duration_seconds_count", door=door)
            == counted
        ), (path, params)

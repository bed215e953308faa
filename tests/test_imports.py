"""Bulk imports: progress in the Task Progress Metadata v1 shape, per-URL results."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from cards import imports
from cards.models import Agent, ImportJob
from cards.progress import SCHEMA, progress_errors
from tests.factories import minimal_card
from tests.support import SEEDS, CardServer

pytestmark = pytest.mark.django_db


def seed_002_schema() -> dict[str, Any]:
    text = (SEEDS / "002_358fb866dd0b17ee.txt").read_text()
    section = text.split("## 8. JSON Schema (normative)", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert block is not None
    return json.loads(block.group(1))


def test_our_copy_of_the_seed_002_schema_is_the_published_one(shared_dir: Path) -> None:
    assert SCHEMA == seed_002_schema()


def test_the_seed_002_conformance_vectors(shared_dir: Path) -> None:
    tracker = {"id": "t", "total": 10}
    steps = [{"trackers": [{**tracker, "progress": p}]} for p in (0, 10, 10)]
    assert all(not progress_errors(b, a) for a, b in zip([None, *steps], steps, strict=False))  # 1
    unknown = [{"trackers": [{"id": "u", "progress": p}]} for p in (1, 2, 3)]
    assert all(not progress_errors(doc) for doc in unknown)  # 2
    assert progress_errors({"trackers": [{"id": "x", "progress": 11, "total": 10}]})  # 3
    assert progress_errors({"trackers": [{"id": "x", "status": "paused"}]})  # 4
    advisory = {
        "trackers": [{"id": "x", "progress": 1, "total": 10}],
        "aggregate": {"progress": 9, "total": 10},
    }
    assert not progress_errors(advisory)  # 5


def serve_cards(card_server: CardServer, n: int) -> list[str]:
    return [
        card_server.serve(f"/c{i}.json", json.dumps(minimal_card(name=f"Imported {i}")).encode())
        for i in range(n)
    ]


def test_an_import_of_urls_reports_progress_and_results(
    client_auth: APIClient,
    client_anon: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
    shared_dir: Path,
) -> None:
    urls = serve_cards(card_server, 3) + [card_server.url("/missing.json"), "ftp://nope.example"]
    with django_capture_on_commit_callbacks(execute=True):
        created = client_auth.post("/api/v1/imports", {"urls": urls}, format="json")
    assert created.status_code == 202
    job_id = created.json()["id"]
    document = client_anon.get(f"/api/v1/imports/{job_id}").json()
    assert document["status"] == "completed"
    assert document["counts"]["crawled"] == 3
    assert document["counts"]["failed"] == 1 and document["counts"]["invalid"] == 1
    validator = jsonschema_rs.validator_for(seed_002_schema(), validate_formats=True)
    validator.validate(document["progress"])
    assert not progress_errors(document["progress"])
    trackers = {t["id"]: t for t in document["progress"]["trackers"]}
    assert trackers["crawl"]["progress"] == trackers["crawl"]["total"] == 5
    assert trackers["crawl"]["status"] == "completed"
    outcomes = [(row["url"], row["outcome"]) for row in document["results"]]
    assert outcomes[3] == (urls[3], "failed") and outcomes[4] == (urls[4], "invalid")
    assert Agent.objects.filter(name__startswith="Imported").count() == 3


def test_progress_never_goes_back_while_an_import_runs(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    urls = serve_cards(card_server, 4)
    job = imports.import_create(urls=urls, user=user, enqueue=False)
    previous = imports.progress_document(job)
    assert not progress_errors(previous)
    for item_id in imports.import_list(job_id=job.pk):
        imports.import_item_process(item_id=item_id)
        job.refresh_from_db()
        current = imports.progress_document(job)
        assert not progress_errors(current, previous)
        assert current["aggregate"]["progress"] >= previous["aggregate"]["progress"]
        previous = current
    assert job.status == ImportJob.Status.COMPLETED


def test_an_import_can_read_its_urls_from_a_document(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    urls = serve_cards(card_server, 2)
    listing = card_server.serve(
        "/list.json", json.dumps({"agents": [{"url": u} for u in urls]}).encode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        job_id = client_auth.post("/api/v1/imports", {"url": listing}, format="json").json()["id"]
    job = ImportJob.objects.get(pk=job_id)
    assert job.status == "completed" and job.total == 2


def test_an_unreadable_listing_fails_the_import_with_a_reason(
    client_auth: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
    client_anon: APIClient,
) -> None:
    listing = card_server.serve("/list.json", b'{"nothing": true}')
    with django_capture_on_commit_callbacks(execute=True):
        job_id = client_auth.post("/api/v1/imports", {"url": listing}, format="json").json()["id"]
    document = client_anon.get(f"/api/v1/imports/{job_id}").json()
    assert document["status"] == "failed"
    assert "list of URLs" in document["error"]
    assert document["progress"]["trackers"][0]["status"] == "failed"
    assert not progress_errors(document["progress"])


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"urls": []},
        {"urls": "x"},
        {"urls": [1]},
        {"urls": ["a"], "url": "b"},
        {"url": "ftp://x"},
    ],
)
def test_a_bad_import_request_is_a_problem(client_auth: APIClient, body: dict[str, Any]) -> None:
    response = client_auth.post("/api/v1/imports", body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert ImportJob.objects.count() == 0


def test_too_many_urls_are_refused(client_auth: APIClient, settings: Any) -> None:
    settings.REGISTRY_IMPORT_INLINE_MAX_URLS = 2
    response = client_auth.post(
        "/api/v1/imports", {"urls": ["https://a.example"] * 3}, format="json"
    )
    assert response.status_code == 400


def test_imports_need_a_token(client_anon: APIClient) -> None:
    assert (
        client_anon.post(
            "/api/v1/imports", {"urls": ["https://a.example"]}, format="json"
        ).status_code
        == 401
    )


def test_the_import_command_imports_a_file(
    card_server: CardServer, loopback_allowed: None, tmp_path: Path, capsys: Any
) -> None:
    urls = serve_cards(card_server, 2)
    listing = tmp_path / "agents.txt"
    listing.write_text("# two agents\n" + "\n".join(urls) + "\n")
    call_command("import_agents", str(listing))
    captured = capsys.readouterr()
    assert "completed: 2 crawled, 0 failed, 0 refused" in captured.out
    assert "[" + "#" * 30 + "] 2/2" in captured.err

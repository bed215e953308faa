"""Every real card in ../shared/corpus is served from loopback, submitted and crawled."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from cards.models import Agent
from tests.support import CORPUS, SEEDS, CardServer

pytestmark = pytest.mark.django_db


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []


def test_every_corpus_card_is_ingested_without_a_crash(
    shared_dir: Path,
    client_auth: APIClient,
    client_anon: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    files = corpus_files()
    assert len(files) == 77
    for path in files:
        card_server.serve(f"/{path.name}", path.read_bytes())
    for path in files:
        with django_capture_on_commit_callbacks(execute=True):
            response = client_auth.post(
                "/api/v1/agents", {"url": card_server.url(f"/{path.name}")}, format="json"
            )
        assert response.status_code == 202, (path.name, response.content)
    assert Agent.objects.count() == 77
    assert not Agent.objects.filter(status="pending").exists()
    for agent in Agent.objects.all():
        assert agent.latest_snapshot_id is not None, agent.url
        detail = client_anon.get(f"/api/v1/agents/{agent.pk}")
        assert detail.status_code == 200
        card = client_anon.get(f"/api/v1/agents/{agent.pk}/card")
        assert card.status_code == 200
        assert card.content == (CORPUS / agent.url.rsplit("/", 1)[1]).read_bytes()
    # The three documents that are not JSON are stored with their finding, not indexed.
    for broken in ("001", "006", "056"):
        agent = Agent.objects.get(url__contains=f"/{broken}-")
        assert agent.status == "error" and agent.valid is False
    valid = client_anon.get("/api/v1/agents", {"valid": "true", "limit": 100}).json()["results"]
    invalid = client_anon.get("/api/v1/agents", {"valid": "false", "limit": 100}).json()["results"]
    assert len(valid) + len(invalid) == 77
    assert valid and invalid
    # Spot checks on the index built from real cards.
    assert client_anon.get("/api/v1/tags").json()["results"]
    spec_sample = Agent.objects.get(url__contains="/004-")
    assert spec_sample.valid is True, spec_sample.findings
    assert len(spec_sample.interfaces) == 3
    # Verdicts by the version each card declares (docs/validation-rules.md, bench/tck_compare.py):
    # a complete 0.3.0 card with extra supportedInterfaces, a card on a private host and one
    # with the mode `json` are valid; a url-layout card without protocolVersion and one that
    # declares 1.0 without supportedInterfaces are not.
    expected = {"057": True, "023": True, "062": True, "008": False, "050": False, "058": False}
    for prefix, valid in expected.items():
        agent = Agent.objects.get(url__contains=f"/{prefix}-")
        errors = [f for f in agent.findings if f["severity"] == "error"]
        assert agent.valid is valid, (prefix, errors)


def seed_000_card() -> dict[str, Any]:
    text = (SEEDS / "000_69e19ff03653abec.txt").read_text()
    block = re.search(r"```json\n(.*?)\n```", text, re.S)
    assert block is not None
    card = json.loads(block.group(1))
    # The seed shows a partial card; complete it with the fields A2A requires.
    card.update(
        {
            "name": "Fight comparison agent",
            "description": "Seed 000's example, completed.",
            "supportedInterfaces": [
                {
                    "url": "https://fight.example.com/a2a",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "version": "1.0.0",
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
        }
    )
    return card


def test_the_seed_000_card_is_found_by_tag_and_by_schema_mode(
    shared_dir: Path,
    client_auth: APIClient,
    client_anon: APIClient,
    card_server: CardServer,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    card_server.serve("/.well-known/agent-card.json", json.dumps(seed_000_card()).encode())
    with django_capture_on_commit_callbacks(execute=True):
        client_auth.post("/api/v1/agents", {"url": card_server.origin}, format="json")
    by_tag = client_anon.get("/api/v1/agents", {"tag": "fight"}).json()["results"]
    by_mode = client_anon.get(
        "/api/v1/agents", {"input_mode": "application/json;schema=fightComparison"}
    ).json()["results"]
    by_output = client_anon.get(
        "/api/v1/agents", {"output_mode": "application/json;schema=fightResponse"}
    ).json()["results"]
    assert [a["name"] for a in by_tag] == ["Fight comparison agent"]
    assert by_mode == by_tag and by_output == by_tag
    assert by_tag[0]["validation"]["valid"] is True


def test_the_tck_comparison_skips_and_says_why_without_a_tck_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import tck_compare

    assert tck_compare.main(["--tck-1-0", str(tmp_path / "none")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("skipped:") and "--tck-1-0" in out and "--tck-0-3" in out


@pytest.mark.parametrize(
    ("card", "branch"),
    [
        ({"protocolVersion": "0.3.0", "url": "u", "supportedInterfaces": []}, "0.3"),
        ({"protocolVersion": "1.0", "url": "u"}, "1.0"),
        ({"supportedInterfaces": []}, "1.0"),
        ({"url": "u"}, "0.3"),
        ({"protocolVersion": "{{ v }}", "url": "u"}, "0.3"),
    ],
)
def test_the_tck_comparison_matches_each_card_with_the_branch_of_its_declared_version(
    card: dict[str, Any], branch: str
) -> None:
    from bench.tck_compare import tck_branch

    assert tck_branch(json.dumps(card).encode()) == branch
    assert tck_branch(b"{not json") == "1.0"

"""Migration 0017: stored URLs brought to the normal form, and the rows that then collide
(cards/url_collisions.py). Rows are stored as the registry stored them before the normal form,
the migration's own function runs on them, and the v1 API is asked afterwards. Also the
commands that take a URL."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import url_collisions
from cards.models import Agent, AuditEntry, Manifest
from cards.rendering.store import DOC_FORMAT
from tests.factories import minimal_card

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("cards.migrations.0017_url_normal_form")
CARD = "https://h.example/rejected-card/card.json"


def _stored(url: str, *, age: int, card_url: str = "", **fields: Any) -> Agent:
    """An agent row as an older registry stored it (no normalising), ``age`` days old."""
    agent = Agent.objects.create(url=url, card_url=card_url, **fields)
    created = timezone.now() - timedelta(days=age)
    Agent.objects.filter(pk=agent.pk).update(created_at=created, doc_format=3)
    return Agent.objects.get(pk=agent.pk)


def _manifest(url: str, *, age: int) -> Manifest:
    manifest = Manifest.objects.create(url=url, origin="")
    Manifest.objects.filter(pk=manifest.pk).update(created_at=timezone.now() - timedelta(days=age))
    return manifest


@pytest.fixture
def rows() -> dict[str, Any]:
    users = get_user_model().objects
    alice, bob = users.create_user(username="alice"), users.create_user(username="bob")
    old_m = _manifest("http://m.example/.well-known/ard.json", age=9)
    new_m = _manifest("http://M.example.:80/.well-known/ard.json", age=2)
    return {
        "alice": alice,
        "bob": bob,
        # The issue: Alice's rejected card, then Bob's copies made by spelling its URL.
        "rejected": _stored(CARD, card_url=CARD, age=10, submitted_by=alice,
                            moderation="rejected"),
        "copy": _stored("https://h.example/rejected-card/./card.json", card_url=CARD, age=5,
                        submitted_by=bob),
        "copy2": _stored("https://h.example/rejected-card/%63ard.json", card_url=CARD, age=4,
                         submitted_by=bob),
        # A spelling registered first: it keeps the URL, and takes it from the later row.
        "first": _stored("https://w.example//card.json", age=8, submitted_by=bob),
        "later": _stored("https://w.example/card.json", age=1, submitted_by=alice),
        "alone": _stored("HTTPS://Lone.example./x/", card_url="https://lone.example./x/", age=3),
        "broken": _stored("https://h.example/a%zz", age=3),
        # Two spellings of one manifest, with cards inline in each.
        "old_m": old_m,
        "new_m": new_m,
        "inline_old": _stored(f"{old_m.url}#a", age=9, manifest=old_m),
        "inline_dup": _stored(f"{new_m.url}#a", age=2, manifest=new_m),
        "inline_new": _stored(f"{new_m.url}#b", age=2, manifest=new_m),
    }  # fmt: skip


def _fresh(agent: Agent) -> Agent:
    return Agent.objects.get(pk=agent.pk)


def test_the_report_before_migrating_changes_nothing(rows: dict[str, Any]) -> None:
    out = StringIO()
    call_command("url_collisions", stdout=out)
    report = out.getvalue()
    assert "3 agent URLs, 1 card URLs and 0 manifest URLs rewritten" in report, report
    assert "4 agents and 1 manifests merged" in report, report
    assert f"review: agent {rows['copy'].pk} was approved" in report
    assert "left as it was: agent" in report and "a%zz" in report
    assert _fresh(rows["copy"]).url == "https://h.example/rejected-card/./card.json"
    assert not AuditEntry.objects.exists()


def test_the_migration_merges_colliding_rows_and_says_what_it_did(
    rows: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    MIGRATION.normalise(apps, None)
    printed = capsys.readouterr().out
    rejected, copy, copy2 = (_fresh(rows[k]) for k in ("rejected", "copy", "copy2"))
    # The oldest row keeps the URL, as it was: still rejected.
    assert rejected.url == CARD and rejected.moderation == "rejected"
    assert rejected.deleted_at is None
    for merged in (copy, copy2):
        assert merged.deleted_at is not None and merged.next_crawl_at is None
        assert merged.url.endswith(f"#duplicate-of-{rejected.pk}")
        assert merged.submitted_by_id == rows["bob"].pk  # nothing lost
        entry = AuditEntry.objects.get(agent=merged)
        assert entry.action == "merge" and entry.actor is None
        assert entry.detail["keeper"] == str(rejected.pk) and entry.detail["normal_url"] == CARD
        assert f"agent {merged.pk} (" in printed and f"review: agent {merged.pk}" in printed
    first, later = _fresh(rows["first"]), _fresh(rows["later"])
    assert first.url == "https://w.example/card.json" and first.deleted_at is None
    assert later.url == f"https://w.example/card.json#duplicate-of-{first.pk}"
    alone = _fresh(rows["alone"])
    assert (alone.url, alone.card_url) == ("https://lone.example/x", "https://lone.example/x")
    assert alone.doc_format == DOC_FORMAT and "https://lone.example/x" in alone.detail_doc
    assert _fresh(rows["broken"]).url == "https://h.example/a%zz"
    assert "left as it was: agent" in printed
    # Manifests: the older keeps its URL, the other's agents move to it, inline cards follow.
    old_m, new_m = (
        Manifest.objects.get(pk=rows["old_m"].pk),
        Manifest.objects.get(pk=rows["new_m"].pk),
    )
    assert old_m.url == "http://m.example/.well-known/ard.json"
    assert new_m.url.endswith(f"#duplicate-of-{old_m.pk}") and new_m.status == "error"
    inline_new = _fresh(rows["inline_new"])
    assert inline_new.url == f"{old_m.url}#b" and inline_new.manifest_id == old_m.pk
    assert _fresh(rows["inline_dup"]).deleted_at is not None
    assert _fresh(rows["inline_old"]).url == f"{old_m.url}#a"
    # Run again: nothing left to do.
    assert not url_collisions.plan(apps).changed


def test_after_migrating_the_spellings_reach_the_row_that_kept_the_url(
    rows: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    MIGRATION.normalise(apps, None)
    bob = APIClient()
    bob.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=rows['bob']).key}")
    for spelling in ("https://h.example/rejected-card/./card.json", CARD + "/"):
        response = bob.post("/api/v1/agents", {"url": spelling}, format="json")
        assert response.status_code == 409, response.content
        assert response.json()["type"].endswith("url-registered")
    assert Agent.objects.filter(url__startswith="https://h.example/rejected-card").count() == 3


def test_the_recrawl_command_finds_an_agent_by_any_spelling_of_its_url(
    card_server: Any, loopback_allowed: None, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    url = card_server.serve("/cards/card.json", json.dumps(minimal_card()).encode())
    agent = Agent.objects.create(url=url, card_url=url)
    out = StringIO()
    spelled = url.replace("http://", "HTTP://").replace("/cards/", "/cards/./")
    call_command("recrawl", spelled, stdout=out)
    assert "1 crawl(s) queued" in out.getvalue()
    assert _fresh(agent).status == "ok"

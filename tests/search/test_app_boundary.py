"""Search as an app of its own (issue 48, DESIGN.md "Search"): its two models moved from cards
with their tables untouched, its tasks kept the names queued tasks carry, and a crawl reaches
it only through cards.hooks."""

from __future__ import annotations

from io import StringIO

import pytest
from celery import current_app
from django.core.management import call_command
from django.db import connection

from cards import hooks
from search import tasks
from search.embedding import pending
from search.models import AgentEmbedding, VectorSnapshotPart

pytestmark = pytest.mark.django_db


def _statements(app: str, migration: str) -> list[str]:
    out = StringIO()
    call_command("sqlmigrate", app, migration, stdout=out)
    lines = [line.strip() for line in out.getvalue().splitlines()]
    return [line for line in lines if line and not line.startswith("--")]


@pytest.mark.parametrize(
    ("app", "migration"), [("cards", "0022_search_models_moved"), ("search", "0001")]
)
def test_the_migrations_that_move_the_models_change_no_table(app: str, migration: str) -> None:
    assert _statements(app, migration) == ["BEGIN;", "COMMIT;"]


def test_the_moved_models_read_the_tables_cards_made() -> None:
    assert AgentEmbedding._meta.db_table == "cards_agentembedding"
    assert VectorSnapshotPart._meta.db_table == "cards_vectorsnapshotpart"
    assert AgentEmbedding._meta.app_label == VectorSnapshotPart._meta.app_label == "search"
    tables = set(connection.introspection.table_names())
    assert {"cards_agentembedding", "cards_vectorsnapshotpart"} <= tables
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval('cards_agentembedding_seq')")
            assert cursor.fetchone()[0] >= 1


def test_the_tasks_keep_the_names_queued_tasks_carry() -> None:
    for name, task in [
        ("cards.embed_agents", tasks.embed_agents),
        ("cards.embed_pending", tasks.embed_pending),
        ("cards.save_vector_index", tasks.save_vector_index),
    ]:
        assert task.name == name
        assert current_app.tasks[name].run.__module__ == "search.tasks"


def test_a_crawl_reaches_search_only_through_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pending.embed_after_commit in hooks.text_changes  # search's AppConfig.ready
    told: list[list[str]] = []
    monkeypatch.setattr(hooks, "text_changes", [told.append])
    hooks.text_changed(["a", "b"])
    assert told == [["a", "b"]]

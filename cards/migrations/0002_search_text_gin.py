"""Full-text index on PostgreSQL; SQLite (the no-configuration mode) searches without it."""

from __future__ import annotations

from typing import Any

from django.db import migrations

# The expression must match cards.selectors.text_filter exactly for the planner to use it.
CREATE = (
    "CREATE INDEX IF NOT EXISTS agent_search_text_gin ON cards_agent "
    "USING gin (to_tsvector('english'::regconfig, search_text))"
)
DROP = "DROP INDEX IF EXISTS agent_search_text_gin"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("cards", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]

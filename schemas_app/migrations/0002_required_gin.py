"""GIN index for payload matching on PostgreSQL; SQLite (no-configuration mode) filters in Python.

``required ?| keys`` finds the usable schemas requiring at least one of an object payload's keys;
``schemas_app.matching`` then checks ``required <@ keys`` on those rows only.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS schemadoc_required_gin ON schemas_app_schemadocument "
    "USING gin (required) WHERE usable"
)
DROP = "DROP INDEX IF EXISTS schemadoc_required_gin"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("schemas_app", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]

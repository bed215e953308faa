"""Render the stored documents of agents that existed before the read model (format 1).

Later changes of a document's shape bump ``cards.rendering.store.DOC_FORMAT`` and add a
migration like this one; ``manage.py render_documents`` does the same by hand.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def render(apps: Any, schema_editor: Any) -> None:
    from cards.rendering.store import render_stale_after_migrating

    render_stale_after_migrating(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("cards", "0006_read_model")]
    operations = [migrations.RunPython(render, migrations.RunPython.noop)]

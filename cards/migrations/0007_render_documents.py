"""Render the stored documents of agents that existed before the read model (format 1).

Later changes of a document's shape bump ``cards.rendering.store.DOC_FORMAT`` and add a
migration like this one; ``manage.py render_documents`` does the same by hand.
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, migrations, transaction


def render(apps: Any, schema_editor: Any) -> None:
    # The current renderer, not historical models: the documents must have today's shape. If a
    # later migration has not yet added a column today's models read, the rows stay stale and
    # are rendered on first read or by `manage.py render_documents` after migrating.
    from cards.rendering.store import facets_rebuild, render_all

    try:
        with transaction.atomic():
            render_all(stale_only=True)
            facets_rebuild()
    except DatabaseError as exc:
        print(f"\n  documents left to `manage.py render_documents`: {exc}".rstrip())


class Migration(migrations.Migration):
    dependencies = [("cards", "0006_read_model")]
    operations = [migrations.RunPython(render, migrations.RunPython.noop)]

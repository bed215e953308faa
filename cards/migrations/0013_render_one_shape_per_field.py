"""Render the stored documents again (format 3): list rows share the detail's shapes.

``moderation`` and ``health`` are objects in list rows as in the detail, list rows gain
``crawl``, and ``signature_status``, ``crawl.last_error`` and ``crawl.last_error_code`` are
null (never "") when nothing was observed. See docs/api.md ("One shape per field").
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def render(apps: Any, schema_editor: Any) -> None:
    from cards.rendering.store import render_stale_after_migrating

    render_stale_after_migrating(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("cards", "0012_facet_rank_row_comparison")]
    operations = [migrations.RunPython(render, migrations.RunPython.noop)]

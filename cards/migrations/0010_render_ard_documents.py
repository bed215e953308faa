"""Render the stored documents again for format 2 (``ard_identifier`` and the ``ard`` section,
capabilities and manifest tags). Same approach as 0007."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def render(apps: Any, schema_editor: Any) -> None:
    from cards.rendering.store import render_stale_after_migrating

    render_stale_after_migrating(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("cards", "0009_embedding_seq")]
    operations = [migrations.RunPython(render, migrations.RunPython.noop)]

"""``Agent.ever_public``: change feeds show a removal only to readers who could once see the
agent (docs/security.md, "Change feeds and malformed input").

Existing rows: an agent is taken to have been public if it is approved or featured now (deleting
keeps the moderation state, so a deleted agent in a public state was public when deleted), or if
the audit log records a move out of a public state.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

PUBLIC = ("approved", "featured")


def backfill(apps: Any, schema_editor: Any) -> None:
    Agent = apps.get_model("cards", "Agent")
    AuditEntry = apps.get_model("cards", "AuditEntry")
    Agent.objects.filter(moderation__in=PUBLIC).update(ever_public=True)
    left = AuditEntry.objects.filter(detail__previous__in=PUBLIC, agent__isnull=False)
    Agent.objects.filter(pk__in=left.values("agent_id")).update(ever_public=True)


class Migration(migrations.Migration):
    dependencies = [("cards", "0010_render_ard_documents")]
    operations = [
        migrations.AddField(
            model_name="agent",
            name="ever_public",
            field=models.BooleanField(
                default=False,
                help_text="Has been visible to everyone (approved or featured, not deleted) at "
                "some time: only then do change feeds show anonymous readers and other accounts "
                "its removal.",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]

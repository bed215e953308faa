"""The verified publisher's origin on each agent (issue 44), and documents rendered again
(format 6: each document says its publisher)."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def render(apps: Any, schema_editor: Any) -> None:
    from cards.rendering.store import render_stale_after_migrating

    render_stale_after_migrating(apps, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('cards', '0020_url_numeric_hosts'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='agent',
            name='publisher_origin',
            field=models.CharField(blank=True, db_index=True, help_text="The card's origin when its owner has proven it (publishers.Origin), else ''.", max_length=300),
        ),
        migrations.AlterField(
            model_name='agent',
            name='submitted_by',
            field=models.ForeignKey(blank=True, help_text="The owner: the verified publisher of the card's origin, else the submitter.", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='submitted_agents', to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(render, migrations.RunPython.noop),
    ]

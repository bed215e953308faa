"""One normal form for every stored URL (issue 35, item 2; cards/url_form.py).

Agents' ``url`` and ``card_url`` and manifests' ``url`` are rewritten in the normal form; rows
whose URLs then collide are merged the way cards/url_collisions.py explains (the oldest keeps the
URL, the others are soft-deleted with an audit entry, nothing is lost), and what was done is
printed. ``manage.py url_collisions`` shows the same report before migrating. The changed agents'
documents are rendered again.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def normalise(apps: Any, schema_editor: Any) -> None:
    from cards import url_collisions

    url_collisions.migrate(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("cards", "0016_agent_live")]
    operations = [migrations.RunPython(normalise, migrations.RunPython.noop)]

"""Every stored URL in the normal form again, now that an IPv4 address in any spelling the fetch
policy reads as one (``127.1``, ``2130706433``, ``0x7f000001``, ``[::ffff:127.0.0.1]``) is its
dotted quad (cards/url_form.py, issue 44): rows that were one address under two spellings are
merged the way cards/url_collisions.py explains (the oldest keeps the URL; nothing is lost).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def normalise(apps: Any, schema_editor: Any) -> None:
    from cards import url_collisions

    url_collisions.migrate(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("cards", "0019_agent_card_cache_control")]
    operations = [migrations.RunPython(normalise, migrations.RunPython.noop)]

# The sequence AgentEmbedding.seq is drawn from on PostgreSQL (cards/embedding/store.py).

from django.db import migrations


def create_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE SEQUENCE IF NOT EXISTS cards_agentembedding_seq")


def drop_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP SEQUENCE IF EXISTS cards_agentembedding_seq")


class Migration(migrations.Migration):

    dependencies = [
        ("cards", "0008_ard"),
    ]

    operations = [migrations.RunPython(create_sequence, drop_sequence)]

"""AgentEmbedding and VectorSnapshotPart move to the search app (search/models.py): taken out of
cards' state only. No table, column, index, constraint or sequence changes; search's first
migration takes them over with the same tables."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("cards", "0021_agent_publisher_origin"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="AgentEmbedding"),
                migrations.DeleteModel(name="VectorSnapshotPart"),
            ],
            database_operations=[],
        ),
    ]

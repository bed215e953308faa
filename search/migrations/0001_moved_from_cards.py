"""AgentEmbedding and VectorSnapshotPart, moved from cards with their tables as they are
(``cards_agentembedding``, made by cards 0008, 0009 and 0015; ``cards_vectorsnapshotpart``, by
cards 0014): state only, no table changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("cards", "0022_search_models_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AgentEmbedding",
                    fields=[
                        (
                            "agent",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="embedding",
                                serialize=False,
                                to="cards.agent",
                            ),
                        ),
                        ("model", models.CharField(max_length=128)),
                        (
                            "text_sha256",
                            models.CharField(
                                help_text="sha256 of the embedded text.", max_length=64
                            ),
                        ),
                        (
                            "vector",
                            models.BinaryField(help_text="float32 little-endian, L2-normalised."),
                        ),
                        (
                            "row_digests",
                            models.BinaryField(
                                blank=True,
                                default=b"",
                                help_text="The first 8 bytes of each row's text digest, in the "
                                "rows' order: rows whose text is unchanged are kept when the "
                                "agent is embedded again.",
                            ),
                        ),
                        (
                            "seq",
                            models.BigIntegerField(
                                db_index=True,
                                help_text="Increases on every write: index refreshes read rows "
                                "after one.",
                            ),
                        ),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={"db_table": "cards_agentembedding"},
                ),
                migrations.CreateModel(
                    name="VectorSnapshotPart",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("snapshot", models.CharField(db_index=True, max_length=128)),
                        ("file", models.CharField(max_length=64)),
                        ("chunk", models.PositiveIntegerField()),
                        ("data", models.BinaryField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "cards_vectorsnapshotpart",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("snapshot", "file", "chunk"),
                                name="vector_snapshot_part_unique",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]

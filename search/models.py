"""What search keeps in the database: each agent's vectors, and the published vector index.

Both tables were made by ``cards`` migrations and keep their names (``cards_agentembedding``,
``cards_vectorsnapshotpart``): the models moved here with search, their tables did not
(search/migrations/0001_moved_from_cards.py, DESIGN.md "Search").
"""

from __future__ import annotations

from django.db import models

from cards.models import Agent


class AgentEmbedding(models.Model):
    """The sentence embedding of an agent's text: the source of truth the vector index is
    rebuilt from (search/embedding/)."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="embedding"
    )
    model = models.CharField(max_length=128)
    text_sha256 = models.CharField(max_length=64, help_text="sha256 of the embedded text.")
    vector = models.BinaryField(help_text="float32 little-endian, L2-normalised.")
    row_digests = models.BinaryField(
        default=b"",
        blank=True,
        help_text="The first 8 bytes of each row's text digest, in the rows' order: rows whose "
        "text is unchanged are kept when the agent is embedded again.",
    )
    seq = models.BigIntegerField(
        db_index=True, help_text="Increases on every write: index refreshes read rows after one."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "cards_agentembedding"


class VectorSnapshotPart(models.Model):
    """A chunk of one file of a vector index snapshot (search/index/), published by the worker
    that wrote it so that processes on other machines, with no shared disk, get the same
    snapshot. A snapshot is published in one transaction; its ``meta.json`` row marks it
    complete."""

    snapshot = models.CharField(max_length=128, db_index=True)
    file = models.CharField(max_length=64)
    chunk = models.PositiveIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "cards_vectorsnapshotpart"
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "file", "chunk"], name="vector_snapshot_part_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.snapshot}/{self.file}#{self.chunk}"

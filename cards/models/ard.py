"""ARD: the manifests publishers list their agents in, and the agents' text embeddings."""

from __future__ import annotations

from django.db import models

from cards.models.agents import Agent


class Manifest(models.Model):
    """An ARD manifest (``/.well-known/ard.json`` or its predecessor ``ai-catalog.json``).

    Entries of type ``application/a2a-agent-card+json`` become agents (``Agent.manifest``);
    entries of other types are counted and kept in ``other_entries``, not indexed.
    """

    url = models.CharField(max_length=2048, unique=True, help_text="Where the manifest was found.")
    origin = models.CharField(max_length=512, db_index=True)
    found_via = models.CharField(
        max_length=32, blank=True, help_text="well-known-ard, link-ard, well-known-ai-catalog."
    )
    status = models.CharField(max_length=16, default="pending", help_text="pending, ok or error.")
    last_error = models.TextField(blank=True)
    last_crawled_at = models.DateTimeField(null=True, blank=True)
    content_sha256 = models.CharField(max_length=64, blank=True)
    spec_version = models.CharField(max_length=32, blank=True)
    host = models.JSONField(default=dict, blank=True)
    findings = models.JSONField(default=list, blank=True)
    entry_count = models.PositiveIntegerField(default=0)
    type_counts = models.JSONField(default=dict, blank=True, help_text="Entries per type.")
    other_entries = models.JSONField(
        default=list, blank=True, help_text="Entries of other types: shown, not indexed."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.url


class AgentEmbedding(models.Model):
    """The sentence embedding of an agent's text: the source of truth the vector index is
    rebuilt from (cards/embedding/)."""

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


class VectorSnapshotPart(models.Model):
    """A chunk of one file of a vector index snapshot (cards/embedding/vectors.py), published
    by the worker that wrote it so that processes on other machines, with no shared disk, get
    the same snapshot. A snapshot is published in one transaction; its ``meta.json`` row marks
    it complete."""

    snapshot = models.CharField(max_length=128, db_index=True)
    file = models.CharField(max_length=64)
    chunk = models.PositiveIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "file", "chunk"], name="vector_snapshot_part_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.snapshot}/{self.file}#{self.chunk}"

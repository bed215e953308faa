"""ARD: the manifests publishers list their agents in."""

from __future__ import annotations

from django.db import models


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

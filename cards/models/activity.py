"""What happened: crawl attempts, bulk imports and the audit log."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from cards.models.agents import Agent


class CrawlAttempt(models.Model):
    """One fetch of an agent's card, whatever its outcome; pruned after 90 days."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="attempts")
    started_at = models.DateTimeField()
    duration_ms = models.FloatField()
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    bytes = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=16)
    success = models.BooleanField()
    error_code = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(fields=["agent", "started_at"], name="attempt_agent_started_idx"),
            models.Index(fields=["started_at"], name="attempt_started_idx"),
        ]


class ImportJob(models.Model):
    """A bulk import: a list of URLs (given, or read from a document) submitted and crawled."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_url = models.CharField(max_length=2048, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    total = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    listed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class ImportItem(models.Model):
    """One URL of an import. Its state only moves forward, so progress is monotonic."""

    class Outcome(models.TextChoices):
        PENDING = "pending"
        SUBMITTED = "submitted"
        INVALID = "invalid"
        CRAWLED = "crawled"
        FAILED = "failed"

    TERMINAL = (Outcome.INVALID, Outcome.CRAWLED, Outcome.FAILED)

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    url = models.TextField()
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.BooleanField(
        null=True, blank=True, help_text="A new agent, or one already known."
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.PENDING)
    detail = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="importitem_unique_position"),
        ]
        indexes = [models.Index(fields=["job", "outcome"], name="importitem_job_outcome_idx")]


class AuditEntry(models.Model):
    """One curator or owner action: who, when, what, why."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_entries"
    )
    action = models.CharField(max_length=32)
    reason = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

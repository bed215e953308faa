"""Snapshots of agents' cards and the index rows search runs on."""

from __future__ import annotations

from django.db import models

from cards.models.agents import Agent


class Snapshot(models.Model):
    """One distinct content of an agent's card, exactly as fetched."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="snapshots")
    sha256 = models.CharField(max_length=64, help_text="sha256 of the raw bytes as served.")
    raw = models.BinaryField()
    content_type = models.CharField(max_length=255, blank=True)
    card_url = models.CharField(max_length=2048, blank=True)
    data = models.JSONField(null=True, blank=True, help_text="The JSON document as served.")
    card = models.JSONField(null=True, blank=True, help_text="The card in the v1.0 shape.")
    shape = models.CharField(max_length=16, blank=True)
    findings = models.JSONField(default=list, blank=True)
    signature = models.JSONField(default=dict, blank=True)
    changes = models.JSONField(
        default=dict, blank=True, help_text="What changed since the previous snapshot."
    )
    fetched_at = models.DateTimeField()

    class Meta:
        ordering = ["-fetched_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "sha256"], name="snapshot_unique_content"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} @ {self.sha256[:12]}"


class Skill(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="skills")
    position = models.PositiveIntegerField()
    skill_id = models.CharField(max_length=512)
    name = models.CharField(max_length=512, blank=True)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    examples = models.JSONField(default=list, blank=True)
    input_modes = models.JSONField(default=list, blank=True, help_text="Effective input modes.")
    output_modes = models.JSONField(default=list, blank=True, help_text="Effective output modes.")

    class Meta:
        ordering = ["agent", "position"]
        indexes = [models.Index(fields=["skill_id"], name="skill_id_idx")]

    def __str__(self) -> str:
        return self.skill_id


class SkillTag(models.Model):
    """A skill's tag, lower-cased, with the agent repeated so tag search needs no join."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tag_rows")
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="tag_rows")
    tag = models.CharField(max_length=256)

    class Meta:
        indexes = [models.Index(fields=["tag", "agent"], name="skilltag_tag_agent_idx")]


class Mode(models.Model):
    """One media type an agent accepts or produces, parsed (DESIGN section 4).

    Rows with ``skill`` null are the card's default modes; a skill without modes of its own
    gets rows copied from the defaults, as the spec says it inherits them.
    """

    class Direction(models.TextChoices):
        INPUT = "input"
        OUTPUT = "output"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="mode_rows")
    skill = models.ForeignKey(
        Skill, null=True, blank=True, on_delete=models.CASCADE, related_name="mode_rows"
    )
    direction = models.CharField(max_length=6, choices=Direction.choices)
    media_type = models.CharField(max_length=512, help_text="Canonical form with parameters.")
    essence = models.CharField(max_length=255, help_text="type/subtype, lower-cased.")
    schema = models.CharField(max_length=512, null=True, blank=True)
    params = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["media_type", "direction", "agent"], name="mode_full_idx"),
            models.Index(fields=["essence", "direction", "agent"], name="mode_essence_idx"),
            models.Index(fields=["schema", "direction", "agent"], name="mode_schema_idx"),
        ]


class Extension(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="extensions")
    position = models.PositiveIntegerField()
    uri = models.CharField(max_length=2048)
    description = models.TextField(blank=True)
    required = models.BooleanField(default=False)
    params = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["agent", "position"]
        indexes = [models.Index(fields=["uri", "agent"], name="extension_uri_agent_idx")]

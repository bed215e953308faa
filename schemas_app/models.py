"""Embedded JSON Schemas: one row per distinct content, the uses of each by agents, and the
compatibility verdicts recorded when an agent's named schema changes between snapshots."""

from __future__ import annotations

from django.db import models

from cards.models import Agent, Snapshot


class SchemaDocument(models.Model):
    """One distinct schema content, addressed by the sha256 of its RFC 8785 form.

    The features (types, required, property names, closed) are what payload matching prefilters
    on: an object payload can only match a schema whose required names it has, and, when the
    schema is closed (``additionalProperties: false``), whose property names hold all its keys.
    """

    class HashAlgorithm(models.TextChoices):
        JCS = "jcs", "sha256 of the RFC 8785 form"
        SORTED_JSON = "sorted-json", "sha256 of sorted-key JSON (RFC 8785 could not represent it)"

    sha256 = models.CharField(max_length=64, unique=True)
    hash_algorithm = models.CharField(
        max_length=16, choices=HashAlgorithm.choices, default=HashAlgorithm.JCS
    )
    content = models.JSONField()
    size = models.PositiveIntegerField(help_text="Bytes of the canonical form.")
    dialect = models.CharField(max_length=512, blank=True, help_text="$schema as written.")
    draft = models.CharField(max_length=16, help_text="The draft it is validated as.")
    schema_uri = models.CharField(max_length=2048, blank=True, help_text="$id.")
    title = models.CharField(max_length=512, blank=True)
    types = models.JSONField(default=list, blank=True, help_text="Top-level types; [] = any.")
    type_mask = models.PositiveSmallIntegerField(default=127)
    required = models.JSONField(default=list, blank=True)
    required_count = models.PositiveIntegerField(default=0)
    property_names = models.JSONField(default=list, blank=True)
    closed = models.BooleanField(default=False, help_text="additionalProperties: false.")
    deprecated = models.BooleanField(default=False)
    usable = models.BooleanField(
        default=False, help_text="Valid, every $ref resolved offline, compiles: used to validate."
    )
    problems = models.JSONField(
        default=list, blank=True, help_text="Findings about the schema (pointers into it)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            # Matching: object payloads against schemas without required names. Schemas with
            # some are found through a GIN index on `required` (PostgreSQL, migration 0002).
            models.Index(
                fields=["type_mask"],
                name="schemadoc_norequired_idx",
                condition=models.Q(usable=True, required_count=0),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title or 'schema'} {self.sha256[:12]}"


class SchemaUse(models.Model):
    """One place an agent's current card declares or uses a schema; replaced on each index.

    ``declared`` rows come from the ``schemas`` map (name -> document). ``input``/``output`` rows
    come from modes naming a declared schema (per skill, and for the card's default modes with
    ``skill_id`` empty) and from skill inputFields/outputFields (``source = field``, no name).
    """

    class Role(models.TextChoices):
        DECLARED = "declared"
        INPUT = "input"
        OUTPUT = "output"

    class Source(models.TextChoices):
        SCHEMAS = "schemas"
        MODE = "mode"
        FIELD = "field"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="schema_uses")
    document = models.ForeignKey(
        SchemaDocument,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="uses",
        help_text="Empty when the schema could not be stored (too large, not a schema).",
    )
    sha256 = models.CharField(
        max_length=64, blank=True, help_text="Content hash, also when the schema is not stored."
    )
    role = models.CharField(max_length=8, choices=Role.choices)
    source = models.CharField(max_length=8, choices=Source.choices)
    name = models.CharField(max_length=512, blank=True, help_text="Name in the schemas map.")
    skill_id = models.CharField(max_length=512, blank=True)
    skill_position = models.PositiveIntegerField(null=True, blank=True)
    field_name = models.CharField(max_length=512, blank=True)
    pointer = models.CharField(max_length=2048, help_text="Where the card declares or names it.")

    class Meta:
        ordering = ["agent", "id"]
        indexes = [
            models.Index(fields=["name", "role", "agent"], name="schemause_name_role_idx"),
            models.Index(fields=["document", "role"], name="schemause_document_role_idx"),
            models.Index(fields=["agent", "role"], name="schemause_agent_role_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} {self.role} {self.name or self.field_name}"


class SchemaChange(models.Model):
    """A named schema that differs between two snapshots of one agent, with its verdict."""

    class Kind(models.TextChoices):
        ADDED = "added"
        REMOVED = "removed"
        CHANGED = "changed"

    class Verdict(models.TextChoices):
        COMPATIBLE = "compatible"
        BREAKING = "breaking"
        UNKNOWN = "unknown"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="schema_changes")
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="schema_changes")
    previous_snapshot = models.ForeignKey(
        Snapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    name = models.CharField(max_length=512)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    direction = models.CharField(
        max_length=8, help_text="input, output, both, or unused (declared, in no mode)."
    )
    old_sha256 = models.CharField(max_length=64, blank=True)
    new_sha256 = models.CharField(max_length=64, blank=True)
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    lenient_verdict = models.CharField(
        max_length=16, choices=Verdict.choices, help_text="Under the LENIENT policy."
    )
    semantic = models.CharField(
        max_length=8, blank=True, help_text="Second opinion of a containment check."
    )
    reasons = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["name", "-created_at"], name="schemachange_name_idx"),
            models.Index(fields=["agent", "-created_at"], name="schemachange_agent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.kind} ({self.verdict})"

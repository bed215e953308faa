"""Agents, the snapshots of their cards, and the index rows search runs on."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Upper

from cards.fields import TextArrayField


class Agent(models.Model):
    """One submitted agent: the URL it was submitted with and a summary of its latest card."""

    class Status(models.TextChoices):
        PENDING = "pending"
        OK = "ok"
        ERROR = "error"

    class Moderation(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        FEATURED = "featured"
        HIDDEN = "hidden"
        REJECTED = "rejected"

    PUBLIC_STATES = (Moderation.APPROVED, Moderation.FEATURED)

    class Health(models.TextChoices):
        UNKNOWN = "unknown"
        HEALTHY = "healthy"
        DEGRADED = "degraded"
        UNREACHABLE = "unreachable"
        GONE = "gone"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    url = models.CharField(max_length=2048, unique=True, help_text="Normalised submitted URL.")
    discover = models.BooleanField(
        default=False, help_text="The URL is an origin: the card is found on well-known paths."
    )
    card_url = models.CharField(max_length=2048, blank=True, db_index=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submitted_agents",
        help_text="The owner: the account whose token submitted the agent.",
    )
    moderation = models.CharField(
        max_length=16, choices=Moderation.choices, default=Moderation.APPROVED, db_index=True
    )
    moderation_reason = models.TextField(
        blank=True, help_text="Why it was rejected or hidden; the owner sees it."
    )
    deleted_at = models.DateTimeField(
        null=True, blank=True, help_text="Soft-deleted by its owner: kept for history, not listed."
    )

    # crawl state
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    last_error = models.TextField(blank=True)
    last_error_code = models.CharField(max_length=64, blank=True)
    last_crawled_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    fetch_ms = models.FloatField(null=True, blank=True, help_text="Duration of the last fetch.")
    process_ms = models.FloatField(
        null=True, blank=True, help_text="Parse, validate and index time."
    )
    etag = models.CharField(max_length=512, blank=True)
    last_modified = models.CharField(max_length=128, blank=True)
    next_crawl_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="A sweep claimed the agent; it is due again after this."
    )
    health = models.CharField(max_length=16, choices=Health.choices, default=Health.UNKNOWN)
    consecutive_failures = models.PositiveIntegerField(default=0)
    gone_since = models.DateTimeField(
        null=True, blank=True, help_text="First of an unbroken run of 404/410 answers."
    )

    # summary of the latest card
    shape = models.CharField(max_length=16, blank=True)
    name = models.CharField(max_length=512, blank=True)
    description = models.TextField(blank=True)
    version = models.CharField(max_length=128, blank=True)
    provider_organization = models.CharField(max_length=512, blank=True)
    provider_url = models.CharField(max_length=2048, blank=True)
    documentation_url = models.CharField(max_length=2048, blank=True)
    icon_url = models.CharField(max_length=2048, blank=True)
    streaming = models.BooleanField(null=True, blank=True)
    push_notifications = models.BooleanField(null=True, blank=True)
    extended_card = models.BooleanField(null=True, blank=True)
    interfaces = models.JSONField(default=list, blank=True)
    valid = models.BooleanField(null=True, blank=True, help_text="No error-level finding.")
    error_count = models.PositiveIntegerField(default=0)
    warning_count = models.PositiveIntegerField(default=0)
    info_count = models.PositiveIntegerField(default=0)
    findings = models.JSONField(default=list, blank=True)
    search_text = models.TextField(blank=True, help_text="What text search looks at.")
    content_sha256 = models.CharField(max_length=64, blank=True)
    signature_status = models.CharField(
        max_length=16,
        blank=True,
        db_index=True,
        help_text="unsigned, verified, unbound-key, invalid or key-unavailable (empty: never).",
    )
    signature = models.JSONField(default=dict, blank=True, help_text="The latest signature report.")
    latest_snapshot = models.ForeignKey(
        "Snapshot", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    # the read model (cards/rendering.py writes these; cards/reads/ serves them)
    tags = TextArrayField(
        default=list, blank=True, help_text="Distinct skill tags, lower-cased (GIN on PostgreSQL)."
    )
    mode_keys = TextArrayField(
        default=list,
        blank=True,
        help_text="Search keys of the agent's modes: i:/o: full media type, i~/o~ type/subtype, "
        "i*/o* type/, s: schema name (GIN on PostgreSQL).",
    )
    summary_doc = models.TextField(blank=True, help_text="Rendered search-result JSON.")
    detail_doc = models.TextField(blank=True, help_text="Rendered public detail JSON.")
    doc_format = models.PositiveSmallIntegerField(
        default=0, help_text="Shape version of the rendered documents; 0: never rendered."
    )
    facet_keys = models.JSONField(
        default=list, blank=True, help_text="What this agent adds to the maintained facet counts."
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(Upper("provider_organization"), name="agent_provider_upper_idx"),
            models.Index(fields=["-created_at", "-id"], name="agent_created_id_idx"),
            # Incremental sync (updated_since) walks agents in the order they changed.
            models.Index(fields=["updated_at", "id"], name="agent_updated_id_idx"),
            # The sweep's "due rows" query reads only scheduled agents.
            models.Index(
                fields=["next_crawl_at"],
                name="agent_due_idx",
                condition=models.Q(next_crawl_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.name or self.url


class FacetCount(models.Model):
    """How many public agents have a tag, a mode or an extension: kept up to date by
    cards/rendering.py in the same transaction as the agent's documents."""

    class Kind(models.TextChoices):
        TAG = "tag"
        MODE = "mode"
        EXTENSION = "extension"
        SCHEMA = "schema"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    direction = models.CharField(max_length=6, blank=True, help_text="Modes only.")
    key = models.TextField()
    agents = models.IntegerField(default=0)
    extra = models.IntegerField(
        default=0, help_text="Tags: skills carrying it; extensions: agents requiring it."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "direction", "key"], name="facet_unique_key"),
        ]
        indexes = [models.Index(fields=["kind", "-agents", "key"], name="facet_rank_idx")]


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


class AgentKey(models.Model):
    """A key (by RFC 7638 thumbprint) that verified one of the agent's cards: key continuity."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="keys")
    thumbprint = models.CharField(max_length=64)
    key_source = models.CharField(max_length=16, blank=True)
    key_url = models.CharField(max_length=2048, blank=True)
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    current = models.BooleanField(default=True)

    class Meta:
        ordering = ["agent", "-last_seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "thumbprint"], name="agentkey_unique_thumbprint"
            ),
        ]


class PinnedKey(models.Model):
    """A JWKS a curator pinned for one agent: its keys count as bound to the agent."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="pinned_keys")
    jwks = models.JSONField(help_text='A JWKS document: {"keys": [...]}.')
    note = models.CharField(max_length=512, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)


class AgentEvent(models.Model):
    """Something in an agent's history that is not a new snapshot by itself (a key change)."""

    class Kind(models.TextChoices):
        SIGNING_KEY_CHANGED = "signing-key-changed"
        SIGNATURE_STATUS_CHANGED = "signature-status-changed"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="events")
    snapshot = models.ForeignKey(
        Snapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]


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


class RegistrySigningKey(models.Model):
    """The registry's own Ed25519 keys for the attestations it issues; the active one signs."""

    kid = models.CharField(max_length=64, unique=True)
    private_pem = models.TextField(help_text="PKCS#8 PEM of the private key.")
    public_jwk = models.JSONField()
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

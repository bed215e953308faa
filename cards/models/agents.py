"""Agents: the submitted URL, the summary of the latest card and the read model."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F
from django.db.models.functions import Upper

from cards.fields import TextArrayField


def catalogue_rank() -> models.Case:
    """The catalogue's order (docs/catalogue.md), first key: featured agents, then healthy ones
    with a verified signature, then healthy ones with a valid card, then the rest; agents
    without a card last (only their owner and staff see them). The values are the choices'
    (``Agent.Moderation``, ``Agent.Health``), written out: the index below is built on this
    same expression, before the class exists."""
    healthy = models.Q(health="healthy")
    return models.Case(
        models.When(latest_snapshot__isnull=True, then=models.Value(4)),
        models.When(moderation="featured", then=models.Value(0)),
        models.When(healthy & models.Q(signature_status="verified"), then=models.Value(1)),
        models.When(healthy & models.Q(valid=True), then=models.Value(2)),
        default=models.Value(3),
        output_field=models.IntegerField(),
    )


# The rows anyone may see in the catalogue (cards.reads.gate for an anonymous viewer, less the
# agents that are gone): the catalogue index's condition.
CATALOGUE_ROWS = models.Q(
    deleted_at__isnull=True, latest_snapshot__isnull=False, moderation__in=("approved", "featured")
) & ~models.Q(health="gone")


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
        help_text="The owner: the verified publisher of the card's origin, else the submitter.",
    )
    publisher_origin = models.CharField(
        max_length=300,
        blank=True,
        db_index=True,
        help_text="The card's origin when its owner has proven it (publishers.Origin), else ''.",
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
    ever_public = models.BooleanField(
        default=False,
        help_text="Has been visible to everyone (approved or featured, not deleted) at some time: "
        "only then do change feeds show anonymous readers and other accounts its removal.",
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
    card_cache_control = models.CharField(
        max_length=512,
        null=True,
        blank=True,
        default=None,
        help_text="The Cache-Control header of the card's last full answer ('' without one; null "
        "before a crawl kept it). The live checks read it instead of fetching the card again.",
    )
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

    # ARD (docs/ard.md)
    ard_identifier = models.CharField(
        max_length=512,
        null=True,
        blank=True,
        unique=True,
        help_text="urn:air:<publisher>:<namespace>:<name>; never reused for another agent.",
    )
    ard_identifier_source = models.CharField(
        max_length=16, blank=True, help_text="manifest (the entry gave it) or derived."
    )
    manifest = models.ForeignKey(
        "Manifest", null=True, blank=True, on_delete=models.SET_NULL, related_name="agents"
    )
    ard_entry = models.JSONField(
        default=dict,
        blank=True,
        help_text="The manifest entry's discovery terms (representativeQueries, capabilities, "
        "tags, trustManifest, description, version) without its inline data.",
    )
    manifest_listed = models.BooleanField(
        null=True, blank=True, help_text="False once the entry disappeared from its manifest."
    )
    capabilities = TextArrayField(default=list, blank=True, help_text="ARD capability tokens.")

    # live conformance checks (live/, docs/live-checks.md): what the agent's endpoints answered
    probe_messages = models.BooleanField(
        default=False,
        help_text="The owner (or staff) opted in to checks that send the agent real messages.",
    )
    live = models.JSONField(
        default=dict, blank=True, help_text="The latest live check report (live/report.py)."
    )
    live_outcome = models.CharField(
        max_length=16,
        blank=True,
        db_index=True,
        help_text="pass, fail or not-checked; empty until the first live check.",
    )
    live_checked_at = models.DateTimeField(null=True, blank=True)

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
            # The catalogue's first page (and the home page): 21 rows in its order, read from
            # the index instead of sorting every public agent (25 ms at 10,000 agents).
            models.Index(
                catalogue_rank(),
                F("created_at").desc(),
                F("id").desc(),
                name="agent_catalogue_idx",
                condition=CATALOGUE_ROWS,
            ),
            # The sweep's "due rows" query reads only scheduled agents.
            models.Index(
                fields=["next_crawl_at"],
                name="agent_due_idx",
                condition=models.Q(next_crawl_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.name or self.url


class Negative(models.Func):
    """``-value``, without a parameter, so that an index on it and a query's ORDER BY and row
    comparison are the same expression: one ascending key for a list ordered by count
    descending, then name ascending."""

    template = "(-%(expressions)s)"
    output_field = models.IntegerField()


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
        # Pages walk (-agents, key) by a row comparison on these (cards/reads/facets.py).
        indexes = [
            models.Index(F("kind"), Negative(F("agents")), F("key"), name="facet_rank_idx"),
            models.Index(
                F("kind"), F("direction"), Negative(F("agents")), F("key"), name="facet_dir_idx"
            ),
        ]

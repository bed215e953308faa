"""The shapes of an agent's public documents (search result and detail), rendered at write time.

They are rendered without a request: absolute links start with :data:`BASE`, which the read side
replaces by the registry's own base URL when it serves the stored bytes. The fields only an
owner or staff may see (``owned``, the moderation reason) are added at read time by
``cards.reads.documents``, never stored.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cards import badges
from cards.models import Agent
from cards.rendering.documents import links, live_outcome, live_section, publisher_section
from cards.rendering.section_shapes import (
    AgentKeySerializer,
    ArdSectionSerializer,
    CrawlSerializer,
    ExtensionSerializer,
    HealthSerializer,
    LiveOutcomeSerializer,
    LiveSectionSerializer,
    ModerationSerializer,
    ProviderField,
    PublisherSerializer,
    SkillBriefSerializer,
    SkillSerializer,
    absolute,
)


class AgentSummarySerializer(serializers.ModelSerializer):
    """One row of a search result: shared fields have the detail's shapes."""

    moderation = ModerationSerializer(source="*")
    health = HealthSerializer(source="*")
    crawl = CrawlSerializer(source="*")
    signature_status = serializers.CharField(
        allow_null=True,
        help_text="null until a signature check ran (the detail's signature.status).",
    )

    score = serializers.IntegerField(
        read_only=True,
        required=False,
        min_value=0,
        max_value=100,
        help_text="How likely the agent serves the need q, in percent (calibrated), on a "
        "ranked list only (docs/search.md).",
    )
    confident = serializers.BooleanField(
        read_only=True,
        required=False,
        help_text="score is at least 50: more likely than not to serve q (ranked lists only).",
    )
    matched_skill = serializers.CharField(
        read_only=True,
        required=False,
        allow_null=True,
        help_text="The name of the skill closest to q (ranked lists only).",
    )
    provider = ProviderField(source="*")
    skills = SkillBriefSerializer(
        many=True, read_only=True, help_text="The first skills, each with its first tags."
    )
    skills_total = serializers.IntegerField(
        read_only=True, help_text="Skills in the card (links.skills lists them all)."
    )
    validation = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    live = serializers.SerializerMethodField()
    publisher = serializers.SerializerMethodField()

    class Meta:
        model = Agent
        fields = [
            "id",
            "ard_identifier",
            "url",
            "card_url",
            "name",
            "description",
            "version",
            "provider",
            "shape",
            "status",
            "moderation",
            "health",
            "crawl",
            "signature_status",
            "publisher",
            "live",
            "streaming",
            "skills",
            "skills_total",
            "validation",
            "last_crawled_at",
            "created_at",
            "links",
            "score",
            "confident",
            "matched_skill",
        ]

    def get_validation(self, agent: Agent) -> dict[str, Any]:
        return {
            "valid": agent.valid,
            "counts": {
                "error": agent.error_count,
                "warning": agent.warning_count,
                "info": agent.info_count,
            },
        }

    def get_links(self, agent: Agent) -> dict[str, str]:
        return links(agent.pk)

    @extend_schema_field(LiveOutcomeSerializer)
    def get_live(self, agent: Agent) -> dict[str, Any]:
        return live_outcome(agent)

    @extend_schema_field(PublisherSerializer)
    def get_publisher(self, agent: Agent) -> dict[str, Any]:
        return publisher_section(agent)


class AgentDetailSerializer(AgentSummarySerializer):
    skills = SkillSerializer(many=True, read_only=True)  # type: ignore[assignment]
    extensions = ExtensionSerializer(many=True, read_only=True)
    crawl = CrawlSerializer(source="*")
    capabilities = serializers.SerializerMethodField()
    interfaces = serializers.JSONField(
        help_text="The first interfaces (links.interfaces lists them all)."
    )
    interfaces_total = serializers.IntegerField(read_only=True)
    extensions_total = serializers.IntegerField(read_only=True)
    content_sha256 = serializers.CharField()
    signature = serializers.SerializerMethodField()
    embed = serializers.SerializerMethodField()
    ard = ArdSectionSerializer(source="*")

    class Meta(AgentSummarySerializer.Meta):
        fields = [
            "id",
            "ard_identifier",
            "url",
            "card_url",
            "name",
            "description",
            "version",
            "provider",
            "shape",
            "documentation_url",
            "icon_url",
            "interfaces",
            "interfaces_total",
            "capabilities",
            "status",
            "health",
            "crawl",
            "content_sha256",
            "signature",
            "publisher",
            "live",
            "validation",
            "skills",
            "skills_total",
            "extensions",
            "extensions_total",
            "ard",
            "embed",
            "created_at",
            "updated_at",
            "links",
        ]

    @extend_schema_field(LiveSectionSerializer)
    def get_live(self, agent: Agent) -> dict[str, Any]:
        return live_section(agent)

    def get_capabilities(self, agent: Agent) -> dict[str, bool | None]:
        return {
            "streaming": agent.streaming,
            "pushNotifications": agent.push_notifications,
            "extendedAgentCard": agent.extended_card,
        }

    def get_validation(self, agent: Agent) -> dict[str, Any]:
        summary = super().get_validation(agent)
        summary["findings"] = agent.findings
        return summary

    @extend_schema_field(
        {
            "type": "object",
            "properties": {k: {"type": "string"} for k in ("markdown", "html", "rst")},
        }
    )
    def get_embed(self, agent: Agent) -> dict[str, str]:
        """Snippets that show the agent's badge, for a README or a web page."""
        request = self.context.get("request")
        return badges.embed_snippets(agent, absolute(request, "/").rstrip("/"))

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_signature(self, agent: Agent) -> dict[str, Any]:
        """The latest verification report plus every key that ever verified a card of this agent."""
        report: dict[str, Any] = {
            "status": agent.signature_status or None,
            "form": None,
            "covered_fields": [],
            "uncovered_fields": [],
            "signatures": [],
            "thumbprints": [],
        }
        report.update(agent.signature or {})
        report["keys"] = AgentKeySerializer(agent.keys.all(), many=True).data
        return report


class ViewerFieldsSerializer(serializers.Serializer):
    """Added to a stored detail at read time: they depend on who is reading."""

    moderation = ModerationSerializer()
    owned = serializers.BooleanField(help_text="Whether the caller may re-crawl or delete it.")


class AgentDetailDocumentSerializer(AgentDetailSerializer, ViewerFieldsSerializer):
    """The detail as served (for the OpenAPI document): stored fields plus the viewer's."""

    class Meta(AgentDetailSerializer.Meta):
        fields = [*AgentDetailSerializer.Meta.fields, "moderation", "owned"]

"""The shapes of the parts of an agent's documents: its skills, keys and extensions, and the
crawl, ARD, health, live-check, moderation and publisher sections (:mod:`cards.rendering.shapes`
puts them together)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cards.models import Agent, AgentKey, Extension, Skill
from cards.rendering.documents import BASE


def absolute(request: Any, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else BASE + path


class SkillSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="skill_id")
    input_modes = serializers.ListField(child=serializers.CharField())
    output_modes = serializers.ListField(child=serializers.CharField())
    tags = serializers.ListField(child=serializers.CharField())
    examples = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = Skill
        fields = ["id", "name", "description", "tags", "examples", "input_modes", "output_modes"]


class SkillWithAgentSerializer(SkillSerializer):
    agent = serializers.SerializerMethodField()

    class Meta(SkillSerializer.Meta):
        fields = [*SkillSerializer.Meta.fields, "agent"]

    def get_agent(self, skill: Skill) -> dict[str, str]:
        request = self.context.get("request")
        return {
            "id": str(skill.agent_id),
            "name": skill.agent.name,
            "link": absolute(request, reverse("agent-detail", args=[skill.agent_id])),
        }


class SkillBriefSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="skill_id")
    tags = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = Skill
        fields = ["id", "name", "tags"]


class AgentKeySerializer(serializers.ModelSerializer):
    class Meta:
        model = AgentKey
        fields = ["thumbprint", "key_source", "key_url", "first_seen_at", "last_seen_at", "current"]


class ExtensionSerializer(serializers.ModelSerializer):
    params = serializers.JSONField(allow_null=True)

    class Meta:
        model = Extension
        fields = ["uri", "description", "required", "params"]


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {"organization": {"type": "string"}, "url": {"type": "string"}},
    }
)
class ProviderField(serializers.Field):
    def to_representation(self, agent: Agent) -> dict[str, str] | None:
        if not agent.provider_organization and not agent.provider_url:
            return None
        return {"organization": agent.provider_organization, "url": agent.provider_url}


class CrawlSerializer(serializers.Serializer):
    status = serializers.CharField()
    last_error = serializers.CharField(
        allow_null=True, help_text="The last crawl's error in words; null when it succeeded."
    )
    last_error_code = serializers.CharField(allow_null=True)
    last_crawled_at = serializers.DateTimeField(allow_null=True)
    last_success_at = serializers.DateTimeField(allow_null=True)
    last_http_status = serializers.IntegerField(allow_null=True)
    fetch_ms = serializers.FloatField(allow_null=True)
    process_ms = serializers.FloatField(allow_null=True)
    next_crawl_at = serializers.DateTimeField(allow_null=True)


class ArdSectionSerializer(serializers.Serializer):
    """The agent as ARD sees it (docs/ard.md)."""

    identifier = serializers.CharField(
        source="ard_identifier", allow_null=True, help_text="urn:air:<publisher>:<namespace>:<name>"
    )
    identifier_source = serializers.ChoiceField(
        choices=["manifest", "derived"], source="ard_identifier_source", allow_null=True
    )
    manifest_url = serializers.CharField(allow_null=True)
    listed = serializers.BooleanField(
        source="manifest_listed",
        allow_null=True,
        help_text="False once the entry disappeared from its manifest; null without a manifest.",
    )
    representative_queries = serializers.ListField(child=serializers.CharField())
    capabilities = serializers.ListField(child=serializers.CharField())
    tags = serializers.ListField(child=serializers.CharField())
    trust_manifest = serializers.JSONField(allow_null=True)


class HealthSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=[c for c, _ in Agent.Health.choices],
        help_text="unknown: not checked yet (never fetched, or demo data).",
    )
    consecutive_failures = serializers.IntegerField()
    gone_since = serializers.DateTimeField(allow_null=True)
    last_success_at = serializers.DateTimeField(allow_null=True)
    uptime_7d = serializers.FloatField(allow_null=True, help_text="null without crawl attempts.")
    uptime_30d = serializers.FloatField(allow_null=True)
    endpoint = serializers.SerializerMethodField(
        help_text="What the agent's own endpoint did at the last live check (docs/live-checks.md)."
    )

    @extend_schema_field(
        {"type": "string", "enum": ["answers", "not-a2a", "unreachable", "not-checked"]}
    )
    def get_endpoint(self, agent: Agent) -> str:
        return str((agent.live or {}).get("endpoint") or "not-checked")


_LIVE_OUTCOMES = ["pass", "fail", "not-checked"]


class LiveCheckSerializer(serializers.Serializer):
    """One live check (docs/live-checks.md lists every id)."""

    id = serializers.CharField(help_text="The A2A TCK requirement id, or the registry's REG-...")
    title = serializers.CharField()
    level = serializers.ChoiceField(
        choices=["MUST", "SHOULD", "REGISTRY"],
        help_text="REGISTRY: a row about the registry's own limits or choices, not the agent.",
    )
    outcome = serializers.ChoiceField(choices=["pass", "warn", "fail", "skip"])
    detail = serializers.CharField(help_text="The reason, in words.")
    interface = serializers.CharField(allow_null=True)
    skill = serializers.CharField(allow_null=True)
    since = serializers.DateTimeField(help_text="Since when the check has had this outcome.")
    exchange = serializers.JSONField(
        allow_null=True, help_text="What was sent and received, truncated; no secrets."
    )


class LiveOutcomeSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=_LIVE_OUTCOMES)
    checked_at = serializers.DateTimeField(allow_null=True)
    counts = serializers.JSONField(allow_null=True, help_text="Checks by outcome.")


class LiveSectionSerializer(LiveOutcomeSerializer):
    endpoint = serializers.ChoiceField(choices=["answers", "not-a2a", "unreachable", "not-checked"])
    failing_since = serializers.DateTimeField(allow_null=True)
    probe_messages = serializers.BooleanField(
        help_text="The owner opted in to checks that send messages."
    )
    checks = LiveCheckSerializer(
        many=True, help_text="The first rows (links.live_checks lists them all)."
    )
    checks_total = serializers.IntegerField(help_text="Rows in the report.")


class ModerationSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=[c for c, _ in Agent.Moderation.choices])
    reason = serializers.CharField(
        allow_null=True,
        help_text="Why it was rejected or hidden: in a detail read by the owner or staff, when "
        "there is a reason; null otherwise (always null in list rows).",
    )


class PublisherSerializer(serializers.Serializer):
    verified = serializers.BooleanField(
        help_text="The agent's owner proved that they run its card's origin (docs/publishers.md)."
    )
    origin = serializers.CharField(allow_null=True, help_text="The proven origin, or null.")
    name = serializers.CharField(
        allow_null=True, help_text='Its host[:port]: "Verified publisher: <name>".'
    )

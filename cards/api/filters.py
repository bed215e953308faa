"""Search filters for ``GET /api/v1/agents`` and ``GET /api/v1/skills``: one explicit field each."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from cards import selectors
from cards.indexing import normalise_tag
from cards.models import Agent, Mode, Skill

_INPUT = Mode.Direction.INPUT
_OUTPUT = Mode.Direction.OUTPUT


class StrictBooleanField(forms.Field):
    """``true``/``false`` (or 1/0, yes/no); anything else is an error rather than ignored."""

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        lowered = str(value).lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise forms.ValidationError("must be true or false")


class StrictBooleanFilter(django_filters.Filter):
    field_class = StrictBooleanField


class RepeatableCharFilter(django_filters.CharFilter):
    """A parameter that may be given several times (``?tag=a&tag=b``); all values must match."""


class AgentFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="filter_q", help_text="Text over name, description, skills."
    )
    tag = RepeatableCharFilter(
        method="filter_tag", help_text="Skill tag; repeat it: all must match."
    )
    skill = django_filters.CharFilter(method="filter_skill", help_text="Skill id or name.")
    input_mode = django_filters.CharFilter(
        method="filter_input_mode", help_text="Media type accepted, e.g. application/json;schema=X."
    )
    output_mode = django_filters.CharFilter(
        method="filter_output_mode", help_text="Media type produced."
    )
    schema = django_filters.CharFilter(method="filter_schema", help_text="Schema name in a mode.")
    extension = django_filters.CharFilter(field_name="extensions__uri", method="filter_extension")
    provider = django_filters.CharFilter(
        method="filter_provider", help_text="Provider organization."
    )
    streaming = StrictBooleanFilter(field_name="streaming")
    valid = StrictBooleanFilter(field_name="valid")
    verified = StrictBooleanFilter(
        method="filter_verified", help_text="Signed with a key bound to the agent's origin."
    )
    health = django_filters.MultipleChoiceFilter(
        field_name="health",
        choices=Agent.Health.choices,
        help_text="healthy, degraded, unreachable, gone or unknown; repeatable (any matches). "
        "Without it, gone agents are left out.",
    )
    status = django_filters.ChoiceFilter(field_name="status", choices=Agent.Status.choices)

    class Meta:
        model = Agent
        fields: list[str] = []

    def filter_verified(self, queryset: QuerySet[Agent], name: str, value: bool) -> QuerySet[Agent]:
        if value is None:
            return queryset
        if value:
            return queryset.filter(signature_status="verified")
        return queryset.exclude(signature_status="verified")

    def filter_q(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        return selectors.text_filter(queryset, value)

    def filter_tag(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        for tag in self.data.getlist("tag") if hasattr(self.data, "getlist") else [value]:
            if tag.strip():
                queryset = selectors.with_tag(queryset, tag)
        return queryset

    def filter_skill(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        return selectors.with_skill(queryset, value)

    def filter_input_mode(
        self, queryset: QuerySet[Agent], name: str, value: str
    ) -> QuerySet[Agent]:
        return selectors.with_mode(queryset, selectors.mode_query(value, parameter=name), _INPUT)

    def filter_output_mode(
        self, queryset: QuerySet[Agent], name: str, value: str
    ) -> QuerySet[Agent]:
        return selectors.with_mode(queryset, selectors.mode_query(value, parameter=name), _OUTPUT)

    def filter_schema(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        return selectors.with_schema(queryset, value)

    def filter_extension(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        return selectors.with_extension(queryset, value)

    def filter_provider(self, queryset: QuerySet[Agent], name: str, value: str) -> QuerySet[Agent]:
        return selectors.with_provider(queryset, value)


class SkillFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="filter_q", help_text="Text in the skill name or description."
    )
    tag = RepeatableCharFilter(method="filter_tag", help_text="Tag; repeat it: all must match.")
    input_mode = django_filters.CharFilter(method="filter_input_mode")
    output_mode = django_filters.CharFilter(method="filter_output_mode")
    agent = django_filters.UUIDFilter(field_name="agent_id")

    class Meta:
        model = Skill
        fields: list[str] = []

    def filter_q(self, queryset: QuerySet[Skill], name: str, value: str) -> QuerySet[Skill]:
        for word in value.split()[:10]:
            queryset = queryset.filter(Q(name__icontains=word) | Q(description__icontains=word))
        return queryset

    def filter_tag(self, queryset: QuerySet[Skill], name: str, value: str) -> QuerySet[Skill]:
        for tag in self.data.getlist("tag") if hasattr(self.data, "getlist") else [value]:
            if tag.strip():
                queryset = queryset.filter(tag_rows__tag=normalise_tag(tag))
        return queryset.distinct()

    def _modes(
        self, queryset: QuerySet[Skill], name: str, value: str, direction: str
    ) -> QuerySet[Skill]:
        rows = selectors.mode_query(value, parameter=name).rows(direction)
        return queryset.filter(pk__in=rows.filter(skill__isnull=False).values("skill_id"))

    def filter_input_mode(
        self, queryset: QuerySet[Skill], name: str, value: str
    ) -> QuerySet[Skill]:
        return self._modes(queryset, name, value, _INPUT)

    def filter_output_mode(
        self, queryset: QuerySet[Skill], name: str, value: str
    ) -> QuerySet[Skill]:
        return self._modes(queryset, name, value, _OUTPUT)

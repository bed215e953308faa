"""List filters over the index: by extension and by schema name (the most used values)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.http import HttpRequest

from cards.models import Agent, Extension, Mode

_CHOICES = 30


class ExtensionFilter(admin.SimpleListFilter):
    title = "extension"
    parameter_name = "extension"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        rows = (
            Extension.objects.values("uri").annotate(n=Count("agent", distinct=True)).order_by("-n")
        )
        return [(row["uri"], f"{row['uri']} ({row['n']})") for row in rows[:_CHOICES]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Agent]) -> QuerySet[Agent]:
        if not self.value():
            return queryset
        return queryset.filter(
            Exists(Extension.objects.filter(agent=OuterRef("pk"), uri=self.value()))
        )


class SchemaFilter(admin.SimpleListFilter):
    title = "schema"
    parameter_name = "schema"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        rows = (
            Mode.objects.exclude(schema__isnull=True)
            .values("schema")
            .annotate(n=Count("agent", distinct=True))
            .order_by("-n")
        )
        return [(str(row["schema"]), f"{row['schema']} ({row['n']})") for row in rows[:_CHOICES]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Agent]) -> QuerySet[Agent]:
        if not self.value():
            return queryset
        return queryset.filter(
            Exists(Mode.objects.filter(agent=OuterRef("pk"), schema=self.value()))
        )

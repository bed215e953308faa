"""Curator views of schema contents, their uses and the compatibility history (read-only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from schemas_app.models import SchemaChange, SchemaDocument, SchemaUse


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SchemaUseInline(admin.TabularInline):
    model = SchemaUse
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "agent",
        "role",
        "source",
        "name",
        "skill_id",
        "field_name",
        "pointer",
    )
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SchemaDocument)
class SchemaDocumentAdmin(_ReadOnly):
    list_display = ["sha256", "title", "draft", "types", "closed", "usable", "deprecated", "size"]
    list_filter = ["usable", "draft", "closed", "deprecated", "hash_algorithm"]
    search_fields = ["sha256", "title", "schema_uri"]
    readonly_fields = [f.name for f in SchemaDocument._meta.fields]
    inlines = [SchemaUseInline]


@admin.register(SchemaUse)
class SchemaUseAdmin(_ReadOnly):
    list_display = ["agent", "role", "source", "name", "skill_id", "field_name", "sha256"]
    list_filter = ["role", "source"]
    search_fields = ["name", "sha256", "agent__name", "agent__url"]
    readonly_fields = [f.name for f in SchemaUse._meta.fields]
    list_select_related = ["agent"]


@admin.register(SchemaChange)
class SchemaChangeAdmin(_ReadOnly):
    list_display = [
        "name",
        "agent",
        "kind",
        "direction",
        "verdict",
        "lenient_verdict",
        "created_at",
    ]
    list_filter = ["kind", "verdict", "direction"]
    search_fields = ["name", "agent__name", "old_sha256", "new_sha256"]
    readonly_fields = [f.name for f in SchemaChange._meta.fields]
    list_select_related = ["agent"]

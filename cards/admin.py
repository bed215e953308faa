"""Curator views of agents: skills, findings and snapshots, and a re-crawl action."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from cards import services
from cards.models import Agent, AgentEvent, AgentKey, Extension, PinnedKey, Skill, Snapshot


class SkillInline(admin.TabularInline):
    model = Skill
    extra = 0
    can_delete = False
    fields = ["position", "skill_id", "name", "tags", "input_modes", "output_modes"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ExtensionInline(admin.TabularInline):
    model = Extension
    extra = 0
    can_delete = False
    fields = ["uri", "required", "params"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SnapshotInline(admin.TabularInline):
    model = Snapshot
    extra = 0
    can_delete = False
    fields = ["sha256", "fetched_at", "shape", "card_url", "content_type"]
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class PinnedKeyForm(forms.ModelForm):
    class Meta:
        model = PinnedKey
        fields = ["jwks", "note"]

    def clean_jwks(self) -> Any:
        jwks = self.cleaned_data["jwks"]
        keys = jwks.get("keys") if isinstance(jwks, dict) else None
        if not isinstance(keys, list) or not keys:
            raise forms.ValidationError('Paste a JWKS document: {"keys": [{...}, ...]}.')
        for index, key in enumerate(keys):
            if not isinstance(key, dict) or not isinstance(key.get("kty"), str):
                raise forms.ValidationError(f"Key {index} is not a JWK (it needs a kty).")
            if any(name in key for name in ("d", "p", "q", "k")):
                raise forms.ValidationError(
                    f"Key {index} holds private material; pin public keys only."
                )
        return jwks


class PinnedKeyInline(admin.TabularInline):
    model = PinnedKey
    form = PinnedKeyForm
    extra = 0
    fields = ["jwks", "note", "created_by", "created_at"]
    readonly_fields = ["created_by", "created_at"]


class AgentKeyInline(admin.TabularInline):
    model = AgentKey
    extra = 0
    can_delete = False
    fields = ["thumbprint", "key_source", "key_url", "first_seen_at", "last_seen_at", "current"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AgentEventInline(admin.TabularInline):
    model = AgentEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "kind", "detail", "snapshot"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.action(description="Re-crawl the selected agents")
def recrawl(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    queued = sum(1 for agent in queryset.only("pk") if services.enqueue_crawl(agent.pk))
    modeladmin.message_user(request, f"{queued} crawl(s) queued.", messages.SUCCESS)


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "url",
        "status",
        "valid",
        "error_count",
        "warning_count",
        "last_crawled_at",
    ]
    list_filter = ["status", "valid", "signature_status", "shape", "streaming"]
    search_fields = ["name", "url", "card_url", "provider_organization"]
    actions = [recrawl]
    inlines = [
        SkillInline,
        ExtensionInline,
        SnapshotInline,
        PinnedKeyInline,
        AgentKeyInline,
        AgentEventInline,
    ]

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        for obj in formset.save(commit=False):
            if isinstance(obj, PinnedKey) and obj.created_by_id is None:
                obj.created_by = request.user
            obj.save()
        for obj in formset.deleted_objects:
            obj.delete()
        formset.save_m2m()

    readonly_fields = [
        "id",
        "url",
        "discover",
        "card_url",
        "submitted_by",
        "status",
        "last_error",
        "last_error_code",
        "last_crawled_at",
        "last_success_at",
        "last_http_status",
        "fetch_ms",
        "process_ms",
        "shape",
        "name",
        "description",
        "version",
        "provider_organization",
        "provider_url",
        "streaming",
        "valid",
        "error_count",
        "warning_count",
        "info_count",
        "content_sha256",
        "signature_status",
        "signature_table",
        "findings_table",
        "created_at",
        "updated_at",
    ]
    exclude = [
        "signature",
        "findings",
        "search_text",
        "interfaces",
        "latest_snapshot",
        "etag",
        "last_modified",
    ]

    @admin.display(description="Signatures")
    def signature_table(self, agent: Agent) -> str:
        outcomes = (agent.signature or {}).get("signatures") or []
        if not outcomes:
            return "none"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            (
                (
                    o.get("kid"),
                    o.get("alg"),
                    o.get("key_source"),
                    o.get("result"),
                    o.get("thumbprint") or "",
                    o.get("reason") or "",
                )
                for o in outcomes
                if isinstance(o, dict)
            ),
        )
        return format_html(
            "<table><tr><th>kid</th><th>alg</th><th>key source</th><th>result</th>"
            "<th>thumbprint</th><th>reason</th></tr>{}</table>",
            rows,
        )

    @admin.display(description="Findings")
    def findings_table(self, agent: Agent) -> str:
        if not agent.findings:
            return "none"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            (
                (f.get("severity"), f.get("code"), f.get("pointer"), f.get("message"))
                for f in agent.findings
            ),
        )
        return format_html(
            "<table><tr><th>severity</th><th>code</th><th>pointer</th><th>message</th></tr>{}</table>",
            rows,
        )


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["agent", "sha256", "shape", "fetched_at"]
    readonly_fields = [
        "agent",
        "sha256",
        "card_url",
        "content_type",
        "shape",
        "fetched_at",
        "pretty_card",
        "findings",
    ]
    exclude = ["raw", "data", "card"]

    @admin.display(description="Card as served")
    def pretty_card(self, snapshot: Snapshot) -> str:
        text = (
            json.dumps(snapshot.data, indent=2, ensure_ascii=False)
            if snapshot.data
            else bytes(snapshot.raw).decode("utf-8", "replace")
        )
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", text)

"""The curator's view of agents: list filters, bulk moderation, and a full agent page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.safestring import SafeString

from cards import hooks, moderation
from cards.admin.actions import (
    ReasonActionForm,
    approve,
    feature,
    hide,
    reason_problem,
    recrawl,
    reject,
)
from cards.admin.displays import (
    attempts,
    embed_snippets,
    findings,
    live_checks,
    schema_names,
    signatures,
)
from cards.admin.displays import pretty_card as card_as_served
from cards.admin.filters import ExtensionFilter, SchemaFilter
from cards.admin.inlines import (
    AgentEventInline,
    AgentKeyInline,
    ExtensionInline,
    PinnedKeyInline,
    SkillInline,
    SnapshotInline,
)
from cards.models import Agent, AuditEntry, PinnedKey, Snapshot
from registry.errors import ProblemError


class AgentForm(forms.ModelForm):
    """Opting in to messages here asks the same guards as the API (issue 44: the owner's proof
    of every origin the messages reach); a refusal is the field's error, saying what is missing."""

    class Meta:
        model = Agent
        fields = "__all__"

    def clean_probe_messages(self) -> bool:
        wanted = bool(self.cleaned_data.get("probe_messages"))
        if wanted and not self.instance.probe_messages:
            try:
                hooks.guard(None, self.instance, "probe_messages-on")
            except ProblemError as refusal:
                raise forms.ValidationError(refusal.detail) from None
        return wanted


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    form = AgentForm
    list_display = [
        "name",
        "url",
        "moderation",
        "status",
        "health",
        "signature_status",
        "valid",
        "error_count",
        "warning_count",
        "live_outcome",
        "last_crawled_at",
    ]
    list_filter = [
        "moderation",
        "health",
        "signature_status",
        "valid",
        "status",
        ExtensionFilter,
        SchemaFilter,
        "shape",
        "live_outcome",
        "probe_messages",
    ]
    search_fields = ["name", "url", "card_url", "provider_organization", "description"]
    actions = [approve, reject, feature, hide, recrawl]
    action_form = ReasonActionForm

    def response_action(
        self, request: HttpRequest, queryset: Any, *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        """A reason the action form refuses (a NUL, past 2,000 characters) is named as such;
        Django's admin would say "No action selected." and do nothing."""
        problem = reason_problem(request)
        if problem is not None:
            self.message_user(request, problem, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset, *args, **kwargs)

    list_select_related = ["submitted_by"]
    inlines = [
        PinnedKeyInline,
        SkillInline,
        ExtensionInline,
        SnapshotInline,
        AgentKeyInline,
        AgentEventInline,
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "name",
                    "url",
                    "card_url",
                    "submitted_by",
                    "publisher_origin",
                    "created_at",
                ]
            },
        ),
        ("Moderation", {"fields": ["moderation", "moderation_reason", "deleted_at"]}),
        (
            "Latest crawl",
            {
                "fields": [
                    "status",
                    "health",
                    "consecutive_failures",
                    "last_error",
                    "last_error_code",
                    "last_http_status",
                    "last_crawled_at",
                    "last_success_at",
                    "next_crawl_at",
                    "fetch_ms",
                    "process_ms",
                    "attempts_table",
                ]
            },
        ),
        ("Signatures", {"fields": ["signature_status", "signature_table"]}),
        ("Validation", {"fields": ["valid", "error_count", "warning_count", "findings_table"]}),
        (
            "Live checks",
            {"fields": ["probe_messages", "live_outcome", "live_checked_at", "live_table"]},
        ),
        (
            "Card",
            {"fields": ["version", "shape", "provider_organization", "schemas_table", "card_json"]},
        ),
        ("Embed the badge", {"fields": ["embed_table"]}),
    ]
    # Curators edit the moderation fields and the message opt-in (docs/live-checks.md);
    # everything else comes from crawls and live checks and is shown only.
    readonly_fields = [
        str(name)
        for _, options in fieldsets
        for name in options["fields"]
        if name not in ("moderation", "moderation_reason", "probe_messages")
    ]

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).select_related("latest_snapshot", "submitted_by")

    def save_model(self, request: HttpRequest, obj: Agent, form: Any, change: bool) -> None:
        if change and "probe_messages" in form.changed_data:
            # The opt-in goes through its one service, which audits it as the API's PATCH does;
            # the rest of the form is saved first with the value it had.
            wanted = obj.probe_messages
            obj.probe_messages = not wanted
            self._save_moderated(request, obj, form, change)
            moderation.agent_probe_messages(agent=obj, enabled=wanted, actor=request.user)
            return
        self._save_moderated(request, obj, form, change)

    def _save_moderated(self, request: HttpRequest, obj: Agent, form: Any, change: bool) -> None:
        if change and {"moderation", "moderation_reason"} & set(form.changed_data):
            previous = Agent.objects.get(pk=obj.pk).moderation
            super().save_model(request, obj, form, change)
            moderation.audit(
                actor=request.user,
                agent=obj,
                action=obj.moderation,
                reason=obj.moderation_reason,
                previous=previous,
                via="change form",
            )
            return
        super().save_model(request, obj, form, change)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        for obj in formset.save(commit=False):
            if isinstance(obj, PinnedKey) and obj.created_by_id is None:
                obj.created_by = request.user  # type: ignore[assignment]  # staff: a User
                obj.save()
                moderation.audit(
                    actor=request.user,
                    agent=obj.agent,
                    action="pin-keys",
                    reason=obj.note,
                    keys=len(obj.jwks.get("keys", [])),
                )
            else:
                obj.save()
        for obj in formset.deleted_objects:
            if isinstance(obj, PinnedKey):
                moderation.audit(actor=request.user, agent=obj.agent, action="unpin-keys")
            obj.delete()
        formset.save_m2m()

    def change_view(self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any) -> Any:
        self._base_url = request.build_absolute_uri("/").rstrip("/")
        return super().change_view(request, object_id, *args, **kwargs)

    @admin.display(description="Signature outcomes")
    def signature_table(self, agent: Agent) -> SafeString | str:
        return signatures(agent)

    @admin.display(description="Findings")
    def findings_table(self, agent: Agent) -> SafeString | str:
        return findings(agent)

    @admin.display(description="Crawl history (latest 20)")
    def attempts_table(self, agent: Agent) -> SafeString | str:
        return attempts(agent)

    @admin.display(description="Schemas")
    def schemas_table(self, agent: Agent) -> SafeString | str:
        return schema_names(agent)

    @admin.display(description="Checks of the last run")
    def live_table(self, agent: Agent) -> SafeString | str:
        return live_checks(agent)

    @admin.display(description="Card as served")
    def card_json(self, agent: Agent) -> SafeString | str:
        return card_as_served(agent.latest_snapshot)

    @admin.display(description="Snippets")
    def embed_table(self, agent: Agent) -> SafeString | str:
        return embed_snippets(agent, getattr(self, "_base_url", ""))


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
        "changes",
        "pretty_card",
        "findings",
    ]
    exclude = ["raw", "data", "card", "signature"]

    @admin.display(description="Card as served")
    def pretty_card(self, snapshot: Snapshot) -> SafeString | str:
        return card_as_served(snapshot)


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "actor", "action", "agent", "reason"]
    list_filter = ["action"]
    search_fields = ["reason", "agent__name", "agent__url", "actor__username"]
    readonly_fields = ["created_at", "actor", "action", "agent", "reason", "detail"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

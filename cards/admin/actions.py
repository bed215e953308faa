"""Bulk curator actions; each goes through the moderation service, which writes the audit log."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest

from cards import moderation, services
from cards.models import Agent


class ReasonActionForm(ActionForm):
    """The action bar gets a reason field: required to reject, kept with every action."""

    reason = forms.CharField(required=False, max_length=2000, label="Reason")


def reason_problem(request: HttpRequest) -> str | None:
    """Why the action bar's reason cannot be taken (None when it can)."""
    try:
        ReasonActionForm.base_fields["reason"].clean(request.POST.get("reason", ""))
    except forms.ValidationError as exc:
        return "The reason was not taken: " + " ".join(exc.messages)
    return None


def _reason(request: HttpRequest) -> str:
    return (request.POST.get("reason") or "").strip()


def _moderate(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent], state: str
) -> None:
    reason = _reason(request)
    if state == Agent.Moderation.REJECTED and not reason:
        modeladmin.message_user(
            request, "Give a reason to reject: the submitter sees it.", messages.ERROR
        )
        return
    count = 0
    for agent in queryset:
        moderation.agent_moderate(agent=agent, state=state, actor=request.user, reason=reason)
        count += 1
    modeladmin.message_user(request, f"{count} agent(s) now {state}.", messages.SUCCESS)


@admin.action(description="Approve the selected agents")
def approve(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    _moderate(modeladmin, request, queryset, Agent.Moderation.APPROVED)


@admin.action(description="Reject the selected agents (with the reason above)")
def reject(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    _moderate(modeladmin, request, queryset, Agent.Moderation.REJECTED)


@admin.action(description="Feature the selected agents")
def feature(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    _moderate(modeladmin, request, queryset, Agent.Moderation.FEATURED)


@admin.action(description="Hide the selected agents")
def hide(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    _moderate(modeladmin, request, queryset, Agent.Moderation.HIDDEN)


@admin.action(description="Re-crawl the selected agents")
def recrawl(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
    queued = 0
    for agent in queryset.select_related(None).only("pk"):
        if services.enqueue_crawl(agent.pk):
            queued += 1
            moderation.audit(
                actor=request.user, agent=agent, action="recrawl", reason=_reason(request)
            )
    modeladmin.message_user(request, f"{queued} crawl(s) queued.", messages.SUCCESS)

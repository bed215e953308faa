"""The curator's view of publishers: claimed and proven origins with their audit trail, and
tokens (never their value). Read-only: origins change through their proofs, tokens through
their owners (docs/publishers.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from publishers.models import Origin, OriginEvent, PublisherToken


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Origin)
class OriginAdmin(ReadOnly):
    list_display = ["origin", "account", "state", "method", "verified_at", "checked_at"]
    list_filter = ["state", "method"]
    search_fields = ["origin", "account__username", "account__email"]


@admin.register(OriginEvent)
class OriginEventAdmin(ReadOnly):
    list_display = ["created_at", "origin_text", "account", "action", "method"]
    list_filter = ["action", "method"]
    search_fields = ["origin_text", "account__username"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(PublisherToken)
class PublisherTokenAdmin(ReadOnly):
    list_display = ["name", "prefix", "account", "scope", "expires_at", "last_used_at"]
    list_filter = ["scope"]
    search_fields = ["name", "prefix", "account__username"]
    exclude = ["digest"]

"""Inline tables on the agent page: skills, extensions, snapshots, keys, events, attempts."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from cards.models import AgentEvent, AgentKey, Extension, PinnedKey, Skill, Snapshot


class SkillInline(admin.TabularInline):
    model = Skill
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "position",
        "skill_id",
        "name",
        "tags",
        "input_modes",
        "output_modes",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ExtensionInline(admin.TabularInline):
    model = Extension
    extra = 0
    can_delete = False
    fields = readonly_fields = ("uri", "required", "params")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SnapshotInline(admin.TabularInline):
    model = Snapshot
    extra = 0
    can_delete = False
    fields = readonly_fields = ("sha256", "fetched_at", "shape", "card_url", "content_type")
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
    fields = ("jwks", "note", "created_by", "created_at")
    readonly_fields = ("created_by", "created_at")


class AgentKeyInline(admin.TabularInline):
    model = AgentKey
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "thumbprint",
        "key_source",
        "key_url",
        "first_seen_at",
        "last_seen_at",
        "current",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AgentEventInline(admin.TabularInline):
    model = AgentEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created_at", "kind", "detail", "snapshot")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

"""Routes of the schema API, mounted under /api/v1/ next to cards.api.urls.

Order matters: ``schemas/match`` and ``schemas/sha256/<hex>`` come before the name routes, and
names may contain slashes (``path:``), as may extension URIs.
"""

from __future__ import annotations

from django.urls import path, register_converter

from schemas_app import api


class AnyTextConverter:
    """Like ``path:`` (slashes allowed) but also matching a newline: schema names and extension
    URIs are arbitrary strings from cards."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(AnyTextConverter, "anytext")

urlpatterns = [
    path("schemas", api.SchemaListView.as_view(), name="schema-list"),
    path("schemas/match", api.SchemaMatchView.as_view(), name="schema-match"),
    path("schemas/sha256/<str:hex>", api.SchemaByHashView.as_view(), name="schema-by-hash"),
    path("schemas/<anytext:name>/agents", api.SchemaAgentsView.as_view(), name="schema-agents"),
    path("schemas/<anytext:name>", api.SchemaDetailView.as_view(), name="schema-detail"),
    path(
        "agents/<uuid:pk>/check-message", api.CheckMessageView.as_view(), name="agent-check-message"
    ),
    path(
        "agents/<uuid:pk>/validate-payload",
        api.ValidatePayloadView.as_view(),
        name="agent-validate-payload",
    ),
    path("agents/<uuid:pk>/schemas", api.AgentSchemasView.as_view(), name="agent-schemas"),
    path(
        "agents/<uuid:pk>/schema-changes",
        api.AgentSchemaChangesView.as_view(),
        name="agent-schema-changes",
    ),
    path("extensions/<anytext:uri>", api.ExtensionDetailView.as_view(), name="extension-detail"),
]

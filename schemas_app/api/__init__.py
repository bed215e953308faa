"""The schema API (mounted under /api/v1/ by ``schemas_app.api_urls``); every read goes
through the visibility gate (``cards.reads.gate``) and the shared paging and parameter rules."""

from schemas_app.api.agents import AgentSchemaChangesView, AgentSchemasView, ExtensionDetailView
from schemas_app.api.checks import CheckMessageView, SchemaMatchView, ValidatePayloadView
from schemas_app.api.schemas import (
    SchemaAgentsView,
    SchemaByHashView,
    SchemaDetailView,
    SchemaListView,
)

__all__ = [
    "AgentSchemaChangesView",
    "AgentSchemasView",
    "CheckMessageView",
    "ExtensionDetailView",
    "SchemaAgentsView",
    "SchemaByHashView",
    "SchemaDetailView",
    "SchemaListView",
    "SchemaMatchView",
    "ValidatePayloadView",
]

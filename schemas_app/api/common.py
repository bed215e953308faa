"""Shared by the schema API views: request helpers, links, keysets, output shapes."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request

from cards.models import Agent
from cards.reads import gate
from cards.reads.gate import Viewer
from cards.reads.paging import Keyset
from registry.errors import ProblemError
from schemas_app.conf import limit as setting
from schemas_app.models import SchemaChange, SchemaDocument

_HEX = re.compile(r"[0-9a-fA-F]{64}")


# --- request helpers -----------------------------------------------------------------------


def _invalid(detail: str, pointer: str, slug: str = "invalid-request") -> ProblemError:
    title = "Invalid query parameter" if slug == "invalid-parameter" else "Invalid request"
    return ProblemError(
        status=400,
        slug=slug,
        title=title,
        detail=detail,
        errors=[{"pointer": pointer, "message": detail}],
    )


def _body(request: Request) -> dict[str, Any]:
    size = len(request.body)
    cap = setting("REGISTRY_SCHEMA_PAYLOAD_MAX_BYTES")
    if size > cap:
        raise ProblemError(
            status=413,
            slug="body-too-large",
            title="Request body too large",
            detail=f"the body is {size} bytes; this endpoint takes at most {cap}",
        )
    try:
        data = request.data
    except RecursionError:
        data = None
        too_deep = True
    else:
        too_deep = depth_over(data, setting("REGISTRY_SCHEMA_MAX_DEPTH"))
    if too_deep:
        raise _invalid(
            f"The body is nested deeper than {setting('REGISTRY_SCHEMA_MAX_DEPTH')} levels.", ""
        )
    if not isinstance(data, dict):
        raise _invalid("The request body must be a JSON object.", "")
    return data


_NESTING = (dict, list)


def depth_over(value: Any, limit: int) -> bool:
    """Whether arrays and objects in ``value`` nest deeper than ``limit`` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, _NESTING))
    return False


def _int_param(value: Any, name: str, pointer: str, *, default: int, query: bool) -> int:
    if value is None:
        return default
    if query:
        if not isinstance(value, str) or not value.isdigit():
            value = None
        else:
            value = int(value)
    elif isinstance(value, float) and value.is_integer():
        # A JSON number with a fraction of zero (5.0, as protobuf-based clients send every
        # number) is the integer it spells; 2.5 is not (docs/security.md, "The probe").
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
        slug = "invalid-parameter" if query else "invalid-request"
        raise _invalid(f"{name} must be an integer from 1 to 100", pointer, slug)
    return value


def _visible(request: Request) -> QuerySet[Agent]:
    """The agents this reader may see: the one gate (cards.reads.gate)."""
    return gate.agents(Viewer.of(request.user))


def _agent_with_card(request: Request, pk: Any) -> Agent:
    agent = gate.agent(Viewer.of(request.user), pk)
    if agent.latest_snapshot_id is None:
        raise ProblemError(
            status=409,
            slug="no-card",
            title="No card yet",
            detail="This agent has not been fetched successfully yet.",
        )
    return agent


def _abs(request: Request, path: str) -> str:
    return request.build_absolute_uri(path)


def _agent_ref(request: Request, agent: Agent) -> dict[str, str]:
    return {
        "id": str(agent.pk),
        "name": agent.name,
        "link": _abs(request, reverse("agent-detail", args=[agent.pk])),
    }


def _document_link(request: Request, sha256: str | None) -> str | None:
    if not sha256:
        return None
    return _abs(request, reverse("schema-by-hash", args=[sha256]))


def _schema_path(name: str, suffix: str = "") -> str:
    # Built by hand: a name may hold characters (a newline) no route pattern reverses.
    return reverse("schema-list") + "/" + quote(name, safe="") + suffix


NAMES = Keyset(scope="schema-names", order=("name",))
SCHEMA_AGENTS = Keyset(scope="schema-agents", order=("-created_at", "-id"))
CHANGES = Keyset(scope="schema-changes", order=("-created_at", "-id"))
EXTENSION_USES = Keyset(scope="extension-uses", order=("-id",))
DIRECTION = OpenApiParameter("direction", str, enum=["input", "output"])


# --- output shapes -----------------------------------------------------------------------------


def document_summary(request: Request, document: SchemaDocument | None) -> dict[str, Any] | None:
    if document is None:
        return None
    return {
        "sha256": document.sha256,
        "hash_algorithm": document.hash_algorithm,
        "title": document.title,
        "dialect": document.dialect,
        "draft": document.draft,
        "id": document.schema_uri,
        "types": document.types,
        "required": document.required,
        "property_names": document.property_names,
        "closed": document.closed,
        "deprecated": document.deprecated,
        "usable": document.usable,
        "size": document.size,
        "problems": document.problems,
        "link": _document_link(request, document.sha256),
    }


class SchemaChangeSerializer(serializers.ModelSerializer):
    agent = serializers.SerializerMethodField()
    snapshot = serializers.SerializerMethodField()
    previous_snapshot = serializers.SerializerMethodField()
    reasons = serializers.JSONField()
    # Plain strings: the two verdicts share one choice set, which OpenAPI would name twice.
    kind = serializers.CharField()
    verdict = serializers.CharField(help_text="compatible, breaking or unknown (STRICT policy).")
    lenient_verdict = serializers.CharField(help_text="The same under the LENIENT policy.")

    class Meta:
        model = SchemaChange
        fields = [
            "name",
            "kind",
            "direction",
            "verdict",
            "lenient_verdict",
            "semantic",
            "old_sha256",
            "new_sha256",
            "reasons",
            "agent",
            "snapshot",
            "previous_snapshot",
            "created_at",
        ]

    def get_agent(self, change: SchemaChange) -> dict[str, str]:
        return _agent_ref(self.context["request"], change.agent)

    def get_snapshot(self, change: SchemaChange) -> dict[str, Any]:
        return {"sha256": change.snapshot.sha256, "fetched_at": change.snapshot.fetched_at}

    def get_previous_snapshot(self, change: SchemaChange) -> dict[str, Any] | None:
        previous = change.previous_snapshot
        if previous is None:
            return None
        return {"sha256": previous.sha256, "fetched_at": previous.fetched_at}

"""Checks against declared schemas: match a payload, check a message, validate a payload."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import openapi
from registry.errors import ProblemError, only_members
from schemas_app.api.common import (
    _abs,
    _agent_ref,
    _agent_with_card,
    _body,
    _document_link,
    _int_param,
    _invalid,
    _visible,
)
from schemas_app.matching import match_payload
from schemas_app.payloads import DeclaredSchemas, check_message, check_payload
from schemas_app.skill_inputs import skill_input


class SchemaMatchView(APIView):
    """``{"payload": ..., "limit": n}``: the agents and skills whose input schemas accept it."""

    permission_classes: list[Any] = []

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions=openapi.body(openapi.MATCH, anonymous=True),
        responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        body = _body(request)
        only_members(body, {"payload", "limit"})
        if "payload" not in body:
            raise _invalid("The body needs a payload (any JSON value).", "/payload")
        if "limit" in body and body["limit"] is None:
            raise _invalid("limit must be an integer from 1 to 100", "/limit")
        size = _int_param(body.get("limit"), "limit", "/limit", default=20, query=False)
        result = match_payload(body["payload"], limit=size, agents=_visible(request))
        for agent in result.agents:
            agent["link"] = _abs(request, reverse("agent-detail", args=[agent["id"]]))
            for match in agent["matches"]:
                match["link"] = _document_link(request, match["sha256"])
        return Response(
            {
                "results": result.agents,
                "next": None,
                "truncated": result.truncated,
                "candidates": result.candidates,
                "accepting_schemas": result.accepted,
            }
        )


# --- /agents/{id}/... ------------------------------------------------------------------------


class CheckMessageView(APIView):
    """Seed 000 sections 2-3: what the agent must do with this A2A Message."""

    permission_classes: list[Any] = []

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions=openapi.body(openapi.CHECK_MESSAGE, anonymous=True),
        responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, pk: Any) -> Response:
        body = _body(request)
        message = body
        if "parts" not in body and isinstance(body.get("message"), dict):
            only_members(body, {"message"})
            message = body["message"]  # the JSON-RPC params shape {"message": {...}}
        pointer = "/parts" if message is body else "/message/parts"
        if not isinstance(message.get("parts"), list):
            raise _invalid("An A2A Message needs a parts array.", pointer)
        for index, part in enumerate(message["parts"]):
            if not isinstance(part, dict):
                raise _invalid(
                    "Each part of an A2A Message is a JSON object.", f"{pointer}/{index}"
                )
        agent = _agent_with_card(request, pk)
        result = check_message(message, DeclaredSchemas.of(agent))
        data = result.as_dict()
        if data["schema"] is not None:
            data["schema"]["link"] = _document_link(request, data["schema"]["sha256"])
        data["agent"] = _agent_ref(request, agent)
        return Response(data)


class ValidatePayloadView(APIView):
    """Seed 003: ``{"schema": name, "payload": ...}`` against one of the agent's schemas, or
    ``{"skill": id, "payload": ...}`` against that skill's input (its schema'd input mode, else
    the schema composed from its inputFields: schemas_app.skill_inputs)."""

    permission_classes: list[Any] = []

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        extensions={
            **openapi.body(openapi.VALIDATE_PAYLOAD, anonymous=True),
            **openapi.problems(
                {
                    "404": "No such agent (or one this reader may not see), or no such skill.",
                    "422": "The skill declares no structured input, or validating used the "
                    "request's schema budget.",
                }
            ),
        },
        responses={200: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, pk: Any) -> Response:
        body = _body(request)
        only_members(body, {"schema", "skill", "payload"})
        errors = []
        named = "skill" if "skill" in body and "schema" not in body else "schema"
        if "skill" in body and "schema" in body:
            errors.append({"pointer": "/skill", "message": "give a schema or a skill, not both"})
        elif not isinstance(body.get(named), str) or not body[named]:
            what = "a skill id" if named == "skill" else "a schema name"
            errors.append({"pointer": f"/{named}", "message": f"{what} (string) is required"})
        if "payload" not in body:
            errors.append({"pointer": "/payload", "message": "required (any JSON value)"})
        if errors:
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail="The body needs a schema name or a skill id (one of the two) and a payload.",
                errors=errors,
            )
        agent = _agent_with_card(request, pk)
        if named == "skill":
            found = skill_input(agent, body["skill"])
            data = found.check(body["payload"])
            data["skill"] = {"id": found.skill.skill_id, "name": found.skill.name}
        else:
            data = check_payload(body["schema"], body["payload"], DeclaredSchemas.of(agent))
        if data.get("schema"):
            data["schema"]["link"] = _document_link(request, data["schema"]["sha256"])
        data["agent"] = _agent_ref(request, agent)
        return Response(data)

"""HTTP views of attestations: an agent's signed attestation and the registry's JWKS."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import signing_keys
from cards.attestation import agent_attest, issuer
from cards.reads import gate
from cards.reads.params import Query
from registry.errors import ProblemError

JWT_CONTENT_TYPE = "application/jwt"
JWKS_CONTENT_TYPE = "application/jwk-set+json"


class JWTRenderer(BaseRenderer):
    """Lets ``Accept: application/jwt`` through content negotiation; the token itself is
    returned as a plain response, and problem documents are written as JSON."""

    media_type = JWT_CONTENT_TYPE
    format = "jwt"
    charset = None

    def render(self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None):  # type: ignore[no-untyped-def]
        return JSONRenderer().render(data, accepted_media_type, renderer_context)


def _not_found(detail: str) -> ProblemError:
    return ProblemError(status=404, slug="not-found", title="Not found", detail=detail)


class AgentAttestationView(APIView):
    """A short-lived JWT, signed by the registry, stating what it knows of the agent's card."""

    renderer_classes = [JSONRenderer, JWTRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=["jwt", "json"],
                description="jwt (default): the compact JWS; json: the token and its claims.",
            )
        ],
        responses={
            (200, JWT_CONTENT_TYPE): OpenApiTypes.STR,
            (200, "application/json"): inline_serializer(
                "Attestation",
                {"token": serializers.CharField(), "claims": serializers.DictField()},
            ),
        },
    )
    def get(self, request: Request, pk: Any) -> HttpResponse:
        query = Query(request.query_params, ["format"])
        wanted = query.choice("format", ["jwt", "json"], default="jwt", blank=False)
        agent = (
            gate.agents(gate.Viewer.of(request.user))
            .select_related("latest_snapshot")
            .filter(pk=pk)
            .first()
        )
        if agent is None:
            raise _not_found("No such agent.")
        if agent.latest_snapshot is None:
            raise ProblemError(
                status=409,
                slug="no-card",
                title="No card yet",
                detail="This agent has not been fetched successfully yet: there is nothing to "
                "attest.",
            )
        token, claims = agent_attest(agent, iss=issuer(request.build_absolute_uri("/")))
        response: HttpResponse
        if wanted == "json":
            response = Response({"token": token, "claims": claims})
        else:
            response = HttpResponse(token, content_type=JWT_CONTENT_TYPE)
        response["Cache-Control"] = "no-store"  # each token is fresh (iat, exp, jti)
        return response


@require_safe
def jwks_view(request: HttpRequest) -> JsonResponse:
    """The registry's public keys: every key not retired, so rotated-out keys still verify."""
    response = JsonResponse(signing_keys.jwks(), content_type=JWKS_CONTENT_TYPE)
    response["Cache-Control"] = "public, max-age=300"
    response["Access-Control-Allow-Origin"] = "*"
    response["X-Content-Type-Options"] = "nosniff"
    return response

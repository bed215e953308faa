"""The API of trusted publishing (issue 45 §1): an origin's trusted publishers, and the exchange.

* ``/api/v1/origins/{origin_id}/trusted-publishers`` (GET, POST) and ``.../{publisher_id}``
  (DELETE): the account's own origin only (another account's is a 404, as an unknown one); a
  trusted publisher is registered for a verified origin only.
* ``POST /api/v1/trusted-publishing/exchange {"token"}``: anonymous; a CI job's OIDC ID token
  for a publish token of scope origin (publishers/trusted_publishing.py). Limited per client
  (``REGISTRY_TRUSTED_EXCHANGE_RATE``). A refusal is a 401, 403, 409 or 503 problem whose slug
  names the check that failed.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from publishers import trusted_publishing
from publishers.models import Origin, TrustedPublisher
from publishers.origin_api import own_origin
from registry import limits, openapi
from registry.errors import ProblemError, only_members

ISSUER_HELP = "One of the registry's allowed issuers (REGISTRY_TRUSTED_ISSUERS)."
REPOSITORY_HELP = "GitHub's repository claim (owner/repo), or GitLab's project_path."
WORKFLOW_HELP = (
    "The workflow file's path in the repository: .github/workflows/release.yml (GitHub's "
    "job_workflow_ref or workflow_ref), .gitlab-ci.yml (GitLab's ci_config_ref_uri)."
)
ENVIRONMENT_HELP = "When set, the job's deployment environment must be this one."


class TrustedPublisherSerializer(serializers.ModelSerializer):
    class Meta:
        model = TrustedPublisher
        fields = ["id", "issuer", "repository", "workflow", "environment", "created_at"]
        read_only_fields = fields


class RegisterSerializer(serializers.Serializer):
    issuer = serializers.CharField(min_length=1, max_length=300, help_text=ISSUER_HELP)
    repository = serializers.CharField(min_length=1, max_length=200, help_text=REPOSITORY_HELP)
    workflow = serializers.CharField(min_length=1, max_length=300, help_text=WORKFLOW_HELP)
    environment = serializers.CharField(
        max_length=200, required=False, allow_blank=True, help_text=ENVIRONMENT_HELP
    )


class ExchangeSerializer(serializers.Serializer):
    token = serializers.CharField(
        min_length=1,
        trim_whitespace=False,  # as sent: a blank token is refused by what it is, not emptied
        max_length=trusted_publishing.MAX_TOKEN_LENGTH,
        help_text="The CI job's OIDC ID token, minted for the registry's audience.",
    )
    origin = serializers.CharField(
        min_length=1,
        trim_whitespace=False,
        max_length=300,
        required=False,
        help_text="Only when the workflow publishes to several origins: which one.",
    )


def _text(length: int, description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": length, "description": description}


# A trusted publisher as the document states it (the server takes no other member).
REGISTER_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["issuer", "repository", "workflow"],
    "properties": {
        "issuer": _text(300, ISSUER_HELP),
        "repository": _text(200, REPOSITORY_HELP),
        "workflow": _text(300, WORKFLOW_HELP),
        "environment": {"type": "string", "maxLength": 200, "description": ENVIRONMENT_HELP},
    },
    "additionalProperties": False,
}
# The exchange's body as the document states it (the server takes no other member).
EXCHANGE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["token"],
    "properties": {
        "token": {
            "type": "string",
            "minLength": 1,
            "maxLength": trusted_publishing.MAX_TOKEN_LENGTH,
            "description": "The CI job's OIDC ID token, minted for the registry's audience.",
        },
        "origin": {
            "type": "string",
            "minLength": 1,
            "maxLength": 300,
            "description": "Only when the workflow publishes to several origins: which one.",
        },
    },
    "additionalProperties": False,
}


class ExchangedSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="A publish token (scope origin): shown once.")
    expires_at = serializers.DateTimeField()
    origin = serializers.CharField(help_text="The origin whose agents the token covers.")


def verified(origin: Origin) -> Origin:
    if origin.state != Origin.State.VERIFIED:
        raise ProblemError(
            status=403,
            slug="origin-not-verified",
            title="Origin not verified",
            detail=f"Prove {origin.origin} first (POST /api/v1/origins/{origin.pk}/verify): "
            "only a verified origin may have trusted publishers.",
        )
    return origin


class TrustedPublisherListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: TrustedPublisherSerializer(many=True)})
    def get(self, request: Request, origin_id: int) -> Response:
        """The CI workflows trusted to publish the origin's agents."""
        origin = own_origin(request, origin_id)
        rows = TrustedPublisher.objects.filter(origin=origin).order_by("created_at", "id")
        return Response(TrustedPublisherSerializer(rows, many=True).data)

    @extend_schema(
        request=None,
        responses={200: TrustedPublisherSerializer, 201: TrustedPublisherSerializer},
        extensions={
            **openapi.body(REGISTER_BODY),
            **openapi.problems(
                {"403": "The origin is not verified, or the token's scope does not cover this."}
            ),
        },
    )
    def post(self, request: Request, origin_id: int) -> Response:
        """Trust a CI workflow to publish the origin's agents (the origin must be verified; 200
        when the same one is registered already)."""
        origin = verified(own_origin(request, origin_id))
        if isinstance(request.data, dict):
            only_members(request.data, {"issuer", "repository", "workflow", "environment"})
        body = RegisterSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            row, created = trusted_publishing.register(
                origin,
                request.user,
                issuer=data["issuer"],
                repository=data["repository"],
                workflow=data["workflow"],
                environment=data.get("environment") or None,
            )
        except trusted_publishing.Invalid as exc:
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail=exc.message,
                errors=[{"pointer": f"/{exc.field}", "message": exc.message}],
            ) from None
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(TrustedPublisherSerializer(row).data, status=code)


class TrustedPublisherDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, origin_id: int, publisher_id: int) -> Response:
        """Stop trusting this workflow (publish tokens it got already last until they expire)."""
        origin = own_origin(request, origin_id)
        row = get_object_or_404(TrustedPublisher, pk=publisher_id, origin=origin)
        trusted_publishing.remove(row)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ExchangeView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []

    @extend_schema(
        request=None,
        responses={200: ExchangedSerializer},
        extensions={
            **openapi.body(EXCHANGE_BODY, anonymous=True),
            **openapi.problems(
                {
                    "401": "The ID token was refused; the problem's slug names the check "
                    "(malformed, issuer-not-allowed, unknown-key, bad-signature, "
                    "wrong-audience, expired, not-yet-valid, missing-claim, replayed).",
                    "403": "No trusted publisher matches (no-match), or its origin is no "
                    "longer verified (origin-not-verified).",
                    "409": 'The workflow publishes to several origins: send "origin".',
                    "503": "The issuer's keys could not be fetched (issuer-unreachable).",
                }
            ),
        },
    )
    def post(self, request: Request) -> HttpResponse:
        """Exchange a CI job's OIDC ID token (GitHub Actions, GitLab CI) for a publish token
        that lasts minutes and covers the origin of the trusted publisher it matches."""
        limited = limits.check(
            request._request, "trusted-exchange", settings.REGISTRY_TRUSTED_EXCHANGE_RATE
        )
        if limited is not None:
            return limited
        if isinstance(request.data, dict):
            only_members(request.data, {"token", "origin"})
        body = ExchangeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            done = trusted_publishing.exchange(data["token"], data.get("origin"))
        except trusted_publishing.Refused as refused:
            raise ProblemError(
                status=refused.status,
                slug=refused.reason,
                title="ID token refused",
                detail=refused.detail,
            ) from None
        answer = {
            "token": done.secret,
            "expires_at": done.expires_at,
            "origin": done.token.origin.origin if done.token.origin else "",
        }
        return Response(ExchangedSerializer(answer).data)

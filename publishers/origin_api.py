"""``/api/v1/origins``: an account claims origins, proves them and sees their state and history.

Authenticated only; an account sees only its own rows (another account's id is a 404, as an
unknown one). Errors are problem+json; verify attempts are limited per account
(``REGISTRY_ORIGIN_VERIFY_RATE``), since each one makes the registry fetch or query DNS.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from publishers import origins
from publishers.models import Origin, OriginEvent
from publishers.proofs.jwks_key import MAX_JWS_LENGTH
from registry import limits, openapi
from registry.errors import ProblemError, only_members
from registry.openapi import problems
from registry.rates import Rate

RECENT_EVENTS = 20
# Event details that name other accounts stay in the audit trail, out of the answer.
HIDDEN_DETAIL = ("by_account", "superseded_account")


@extend_schema_field(
    {**openapi.HTTPS_ORIGIN, "description": "scheme://host[:port], e.g. https://agents.example.com"}
)
class OriginField(serializers.CharField):
    """An origin as text; the document states the https form it promises to take."""


class ClaimSerializer(serializers.Serializer):
    origin = OriginField(max_length=300)


class TextField(serializers.CharField):
    """A string and nothing else: DRF's CharField would take a number as its digits."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class VerifySerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=origins.METHODS)
    jws = TextField(
        required=False,
        min_length=1,
        trim_whitespace=False,  # as sent: a blank JWS fails as a JWS, it is not emptied
        max_length=MAX_JWS_LENGTH,
        help_text="jwks only: a compact JWS over the payload of the jwks challenge.",
    )


# The verification's body as the document states it: "jws" goes with the jwks method (the
# server takes no other member).
VERIFY_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["method"],
    "properties": {
        "method": {"type": "string", "enum": list(origins.METHODS)},
        "jws": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_JWS_LENGTH,
            "pattern": "^[^\\x00]*$",
            "description": "jwks only: a compact JWS over the payload of the jwks challenge.",
        },
    },
    "oneOf": [
        {"properties": {"method": {"enum": ["http", "dns"]}}},
        {"properties": {"method": {"enum": ["jwks"]}}, "required": ["jws"]},
    ],
    "additionalProperties": False,
}


class HttpChallengeSerializer(serializers.Serializer):
    url = serializers.CharField()
    body = serializers.CharField()
    how = serializers.CharField()


class DnsChallengeSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    value = serializers.CharField()


class JwksPayloadSerializer(serializers.Serializer):
    origin = serializers.CharField()
    challenge = serializers.CharField()


class JwksChallengeSerializer(serializers.Serializer):
    jwks_url = serializers.CharField()
    payload = JwksPayloadSerializer()
    how = serializers.CharField()


class ChallengesSerializer(serializers.Serializer):
    http = HttpChallengeSerializer()
    dns = DnsChallengeSerializer(allow_null=True, help_text="null for an IP-address host.")
    jwks = JwksChallengeSerializer()


class OriginEventSerializer(serializers.ModelSerializer):
    detail = serializers.SerializerMethodField()

    class Meta:
        model = OriginEvent
        fields = ["action", "method", "detail", "created_at"]

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_detail(self, event: OriginEvent) -> dict[str, Any]:
        shown = event.detail if isinstance(event.detail, dict) else {}
        return {key: value for key, value in shown.items() if key not in HIDDEN_DETAIL}


STATES = ", ".join(Origin.State.values)
STATE_HELP = f"One of {STATES}."
METHOD_HELP = "How it was proven last: http, dns or jwks (empty before a proof)."


class OriginSerializer(serializers.ModelSerializer):
    # Plain strings with their values said: "state" and "method" are enums of other components.
    state = serializers.CharField(read_only=True, help_text=STATE_HELP)
    method = serializers.CharField(read_only=True, help_text=METHOD_HELP)

    class Meta:
        model = Origin
        fields = [
            "id", "origin", "state", "method", "key_id", "verified_at", "checked_at",
            "next_check_at", "failures", "last_error", "created_at",
        ]  # fmt: skip
        read_only_fields = fields


class OriginDetailSerializer(OriginSerializer):
    challenges = serializers.SerializerMethodField()
    events = serializers.SerializerMethodField()

    class Meta(OriginSerializer.Meta):
        fields = [*OriginSerializer.Meta.fields, "challenges", "events"]
        read_only_fields = fields

    @extend_schema_field(ChallengesSerializer)
    def get_challenges(self, origin: Origin) -> dict[str, Any]:
        return origins.instructions(origin)

    @extend_schema_field(OriginEventSerializer(many=True))
    def get_events(self, origin: Origin) -> list[Any]:
        recent = origin.events.order_by("-created_at", "-id")[:RECENT_EVENTS]
        return list(OriginEventSerializer(recent, many=True).data)


class VerifyResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    origin = serializers.CharField()
    verified = serializers.BooleanField()
    state = serializers.CharField(help_text=STATE_HELP)
    method = serializers.CharField()
    error = serializers.CharField(
        required=False, help_text="When not verified: what was found and what was expected."
    )
    transient = serializers.BooleanField(
        required=False, help_text="When not verified: whether the failure may pass by itself."
    )


def own_origin(request: Request, origin_id: int) -> Origin:
    return get_object_or_404(Origin, pk=origin_id, account_id=request.user.pk)


def verify_limited(request: Any) -> HttpResponse | None:
    """A 429 answer when the account is over ``REGISTRY_ORIGIN_VERIFY_RATE``."""
    rate_text = settings.REGISTRY_ORIGIN_VERIFY_RATE
    wait = limits.hit("origin-verify", f"account:{request.user.pk}", Rate.parse(rate_text))
    if not wait:
        return None
    detail = f"Too many proof attempts from this account ({rate_text}); retry later."
    return limits.too_many(wait, detail, path=request.path)


class OriginListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: OriginSerializer(many=True)})
    def get(self, request: Request) -> Response:
        """The account's origins and their state."""
        rows = Origin.objects.filter(account_id=request.user.pk).order_by("origin", "id")
        return Response(OriginSerializer(rows, many=True).data)

    @extend_schema(
        request=ClaimSerializer,
        responses={200: OriginDetailSerializer, 201: OriginDetailSerializer},
        extensions=problems({"400": "Not an origin, or one the registry cannot reach."}),
    )
    def post(self, request: Request) -> Response:
        """Claim an origin: the answer has the challenge to publish for each method (200 when
        the account had claimed it already)."""
        body = ClaimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            origin, created = origins.claimed(request.user, body.validated_data["origin"])
        except origins.OriginRefused as exc:
            raise ProblemError(
                status=400,
                slug="invalid-origin",
                title="Origin refused",
                detail=str(exc),
                errors=[{"pointer": "/origin", "message": str(exc)}],
            ) from None
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(OriginDetailSerializer(origin).data, status=code)


class OriginDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: OriginDetailSerializer})
    def get(self, request: Request, origin_id: int) -> Response:
        """One of the account's origins, its challenges and its recent events."""
        return Response(OriginDetailSerializer(own_origin(request, origin_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, origin_id: int) -> Response:
        """Remove the claim (a verified origin stops being the account's)."""
        origins.remove(own_origin(request, origin_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class OriginVerifyView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: VerifyResultSerializer},
        extensions=openapi.body(VERIFY_BODY),
    )
    def post(self, request: Request, origin_id: int) -> HttpResponse:
        """Prove the origin now by one method; the answer says whether it worked and, if not,
        what the registry found and what it expected."""
        origin = own_origin(request, origin_id)
        if isinstance(request.data, dict):
            only_members(request.data, {"method", "jws"})
        body = VerifySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        limited = verify_limited(request)
        if limited is not None:
            return limited
        data = body.validated_data
        if data["method"] == Origin.Method.JWKS and not data.get("jws"):
            raise ProblemError(
                status=400,
                slug="invalid-request",
                title="Invalid request",
                detail='The jwks method needs "jws": a compact JWS over the challenge payload.',
                errors=[{"pointer": "/jws", "message": "required for the jwks method"}],
            )
        result = origins.verify(origin, data["method"], jws=data.get("jws"))
        return Response({"id": origin.pk, "origin": origin.origin, **result.as_dict()})

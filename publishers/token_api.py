"""``/api/v1/tokens``: an account lists, makes and revokes its own tokens (publishers/tokens.py).

Who may: the signed-in account (session, with its CSRF token), a publish-scoped token of that
account, or the account's operator-issued key (``manage.py issue_token``: a key that may do
whatever its account may, and never expires). A read or agent token gets a 403 problem
``token-scope``. A token never shows its secret or digest after it was made; another account's
token id is a 404 like an unknown one.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from publishers import tokens
from publishers.auth import ScopeRefused
from publishers.models import PublisherToken
from registry import openapi
from registry.errors import ProblemError, only_members

LIST_MAX = 200  # tokens listed, newest first (revoked ones stay listed as a record)


class TokenSerializer(serializers.ModelSerializer[PublisherToken]):
    agent = serializers.UUIDField(source="agent_id", allow_null=True, read_only=True)
    state = serializers.SerializerMethodField(help_text="active, expired or revoked.")

    class Meta:
        model = PublisherToken
        fields = [
            "id", "name", "prefix", "scope", "agent", "state", "expires_at", "created_at",
            "last_used_at", "revoked_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_state(self, token: PublisherToken) -> str:
        return tokens.state(token)


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(
        source="secret_once", read_only=True, help_text="The token itself: shown this once."
    )

    class Meta(TokenSerializer.Meta):
        fields = ["token", *TokenSerializer.Meta.fields]
        read_only_fields = fields


class TokenListSerializer(serializers.Serializer[Any]):
    results = TokenSerializer(many=True)
    total = serializers.IntegerField()


CREATE_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["name", "scope"],
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "maxLength": tokens.NAME_MAX,
            "pattern": "^[^\\x00-\\x1f\\x7f]*[^\\x00-\\x20\\x7f][^\\x00-\\x1f\\x7f]*$",
        },
        "scope": {"type": "string", "enum": ["read", "publish", "agent"]},
        "agent": {
            "type": "string",
            "format": "uuid",
            "description": "With scope agent: the agent (one this account manages).",
        },
        "expires_in_days": {
            "type": "integer",
            "minimum": 1,
            "maximum": tokens.MAX_DAYS,
            "description": "Days until it expires; without it, the token never expires.",
        },
    },
    # A token with scope agent names its agent; no other token names one.
    "oneOf": [
        {"properties": {"scope": {"enum": ["read", "publish"]}}, "not": {"required": ["agent"]}},
        {"properties": {"scope": {"enum": ["agent"]}}, "required": ["agent"]},
    ],
    "additionalProperties": False,
}
CREATE_FIELDS = set(CREATE_BODY["properties"])


def managing_token(request: Request) -> PublisherToken | None:
    """The publisher token the request came with (None for a session or an operator's key);
    a 403 problem unless it has scope publish."""
    token = request.auth if isinstance(request.auth, PublisherToken) else None
    if token is not None and token.scope != PublisherToken.Scope.PUBLISH:
        raise ScopeRefused(
            f"This token ({token.prefix}…) has scope {token.scope}: only a signed-in session "
            "or a token with scope publish may list, make or revoke tokens.",
            token,
        )
    return token


class TokenListCreateView(APIView):
    """The account's tokens (GET) and a new one (POST), shown once."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="tokens_list",
        description="The account's tokens, newest first (expired and revoked ones too, at "
        f"most {LIST_MAX}): name, prefix, scope, expiry, last use. Never the token itself. "
        "A signed-in session or a token with scope publish.",
        responses={200: TokenListSerializer},
    )
    def get(self, request: Request) -> Response:
        managing_token(request)
        rows = tokens.of_account(request.user)
        listed = list(rows[:LIST_MAX])
        data = {"results": TokenSerializer(listed, many=True).data, "total": rows.count()}
        return Response(data, headers={"Cache-Control": "no-store"})

    @extend_schema(
        operation_id="tokens_create",
        description="Make a token. The answer carries it in `token`, this once: the registry "
        "keeps only its SHA-256. `scope`: read, publish, or agent (with `agent`: one the account "
        "manages, else a 404); expiry: `expires_in_days`, or none for a token that never "
        "expires. A token "
        "may not make one broader or longer-lived than itself.",
        request=None,
        extensions={
            **openapi.body(CREATE_BODY),
            **openapi.problems(
                {
                    "404": "The agent named is none this account manages.",
                    "409": "The account holds as many live tokens as it may (100).",
                }
            ),
        },
        responses={201: NewTokenSerializer},
    )
    def post(self, request: Request) -> Response:
        by = managing_token(request)
        body = request.data
        if not isinstance(body, dict):
            raise _invalid("", "The request body must be a JSON object.")
        only_members(body, CREATE_FIELDS)
        try:
            issued = tokens.issue(
                request.user,
                name=body.get("name"),
                scope=body.get("scope"),
                agent_id=body.get("agent"),
                expires_in_days=body.get("expires_in_days"),
                by=by,
            )
        except tokens.TooMany as full:
            raise ProblemError(
                status=409, slug="too-many-tokens", title="Too many tokens", detail=str(full)
            ) from None
        except tokens.NoSuchAgent as missing:
            raise ProblemError(
                status=404, slug="no-such-agent", title="No such agent", detail=str(missing)
            ) from None
        except tokens.Invalid as invalid:
            raise _invalid(invalid.field, invalid.message) from None
        issued.token.secret_once = issued.secret  # type: ignore[attr-defined]
        return Response(
            NewTokenSerializer(issued.token).data,
            status=status.HTTP_201_CREATED,
            headers={"Cache-Control": "no-store"},
        )


class TokenDetailView(APIView):
    """Revoke one of the account's tokens (DELETE)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="tokens_revoke",
        description="Revoke one of the account's tokens: from now on it is refused (401). "
        "Another account's token answers 404, like an unknown one.",
        request=None,
        responses={204: None},
    )
    def delete(self, request: Request, token_id: int) -> Response:
        managing_token(request)
        token = tokens.one_of(request.user, token_id)
        if token is None:
            raise ProblemError(
                status=404, slug="not-found", title="Not found", detail="No such token."
            )
        tokens.revoke(token)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _invalid(field: str, message: str) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-request",
        title="Invalid request",
        detail=message,
        errors=[{"pointer": f"/{field}" if field else "", "message": message}],
    )

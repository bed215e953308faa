"""DRF authentication by a token an owner made (publishers/tokens.py), with its scope enforced.

``Authorization: Bearer a2ar_…`` or ``Token a2ar_…``. A header whose key does not start with
``a2ar_`` is not ours: :meth:`PublisherTokenAuthentication.authenticate` answers None and the
operator's keys (registry.auth.TokenOrBearerAuthentication) are tried next, unchanged.

An unknown, expired or revoked token is a 401 saying which. The token's scope is enforced here,
in the authentication step, because every DRF view goes through it whatever permission
classes it sets (live/api.py, tryit/api.py set their own): a request its scope does not cover
is a 403 problem ``token-scope`` saying what the token may do (scope origin, the CI tokens of
trusted publishing: publishers/origin_scope.py, which may read the body). Without a view (the rate
limiter of registry/limits.py asks who a request is before any view runs) only the token's
validity is checked.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied
from rest_framework.request import Request

from publishers import origin_scope, tokens
from publishers.models import PublisherToken
from registry.errors import ProblemError

_SCHEMES = (b"token", b"bearer")
_MEMO = "_publisher_token"  # on the Django request: (header, token), looked up once


class ScopeRefused(ProblemError, PermissionDenied):  # type: ignore[misc]  # detail: text
    """A 403 problem (``token-scope``); a PermissionDenied too, so that DRF, which catches
    only its own exceptions while authenticating, records the request as unauthenticated."""

    def __init__(self, detail: str, token: PublisherToken) -> None:
        extra: dict[str, Any] = {"token_scope": token.scope}
        if token.agent_id is not None:
            extra["token_agent"] = str(token.agent_id)
        if token.origin is not None:
            extra["token_origin"] = token.origin.origin
        super().__init__(
            status=403,
            slug="token-scope",
            title="Outside the token's scope",
            detail=detail,
            extra=extra,
        )


def presented(request: Any) -> str | None:
    """The publisher token in the Authorization header, or None (no header, another scheme,
    or an operator's key)."""
    words = get_authorization_header(request).split()
    if len(words) != 2 or words[0].lower() not in _SCHEMES:
        return None
    try:
        secret = words[1].decode("ascii")
    except UnicodeDecodeError:
        return None
    return secret if tokens.is_ours(secret) else None


def _token(request: Request, secret: str) -> PublisherToken:
    """The token, looked up once per request (the rate limiter asks first, then the view)."""
    django_request = getattr(request, "_request", request)
    memo = getattr(django_request, _MEMO, None)
    if memo is not None and memo[0] == secret:
        token: PublisherToken = memo[1]
        return token
    try:
        token = tokens.authenticate(secret)
    except tokens.Refused as refused:
        raise AuthenticationFailed(str(refused)) from None
    setattr(django_request, _MEMO, (secret, token))
    return token


class PublisherTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        secret = presented(request)
        if secret is None:
            return None
        token = _token(request, secret)
        context = getattr(request, "parser_context", None) or {}
        if context.get("view") is not None:
            match = getattr(getattr(request, "_request", None), "resolver_match", None)
            method = request.method or "GET"
            kwargs = context.get("kwargs") or {}
            route = getattr(match, "url_name", None)
            if token.scope == PublisherToken.Scope.ORIGIN:  # a CI publish token: one origin
                refusal = origin_scope.refusal(
                    token, request, method=method, kwargs=kwargs, route=route
                )
            else:
                refusal = tokens.scope_refusal(token, method=method, kwargs=kwargs, route=route)
            if refusal is not None:
                raise ScopeRefused(refusal, token)
        return (token.account, token)

    def authenticate_header(self, request: Request) -> str:
        # DRF answers 401 (not 403) only when the first class names a scheme.
        return "Token"


class PublisherTokenScheme(OpenApiAuthenticationExtension):
    """The OpenAPI document: these tokens travel in the same header as the operator's keys, so
    they are the same scheme (``tokenAuth``, described by DRF's own extension) and add neither
    a scheme nor a requirement of their own."""

    target_class = "publishers.auth.PublisherTokenAuthentication"
    name: list[str] = []

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[Any]]]:
        return []

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return []

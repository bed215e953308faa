"""Token authentication that accepts both ``Token <key>`` and ``Bearer <key>``."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

_SCHEMES = (b"token", b"bearer")


class TokenOrBearerAuthentication(TokenAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        words = get_authorization_header(request).split()
        if not words or words[0].lower() not in _SCHEMES:
            return None
        if len(words) != 2:
            raise AuthenticationFailed(
                "The Authorization header must be 'Token <key>' or 'Bearer <key>'."
            )
        try:
            key = words[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("The token contains characters a token never has.") from None
        return self.authenticate_credentials(key)

    def authenticate_header(self, request: Request) -> str:
        return "Token"

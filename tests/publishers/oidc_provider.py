"""A small, real OpenID Connect provider on 127.0.0.1, for the sign-in tests.

It serves what a relying party reads from a provider: the discovery document, the authorization
endpoint (the user is taken as signed in and consenting: it redirects back at once with a code),
the token endpoint (the code, the client's secret, the redirect URI and the PKCE verifier are
checked; the answer carries an RS256 ID token signed with a key made when the provider starts),
the JWKS with that key's public half, and the userinfo endpoint (the access token is checked).
Every request is recorded, so a test can say which endpoints the registry called.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class Person:
    """Who is signed in at the provider."""

    sub: str
    email: str
    email_verified: bool = True
    name: str = "Provider User"
    preferred_username: str = "provider-user"


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    nonce: str | None
    challenge: str | None
    person: Person


@dataclass
class Provider:
    client_id: str
    secret: str
    person: Person
    issuer: str = ""
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    kid: str = field(default_factory=lambda: secrets.token_hex(8))
    grants: dict[str, _Grant] = field(default_factory=dict)
    tokens: dict[str, Person] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # "METHOD /path", in order

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile"],
        }

    def jwks(self) -> dict[str, Any]:
        public = self.key.public_key().public_numbers()
        return {
            "keys": [
                {
                    "kty": "RSA",
                    "use": "sig",
                    "alg": "RS256",
                    "kid": self.kid,
                    "n": _b64(public.n),
                    "e": _b64(public.e),
                }
            ]
        }

    def claims(self, person: Person) -> dict[str, Any]:
        return {
            "sub": person.sub,
            "email": person.email,
            "email_verified": person.email_verified,
            "name": person.name,
            "preferred_username": person.preferred_username,
        }

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if query.get("client_id") != self.client_id or query.get("response_type") != "code":
            return 400, {}, b"unknown client or response type"
        if "openid" not in query.get("scope", "").split():
            return 400, {}, b"scope lacks openid"
        if query.get("code_challenge") and query.get("code_challenge_method") != "S256":
            return 400, {}, b"only S256 challenges"
        code = secrets.token_urlsafe(24)
        self.grants[code] = _Grant(
            client_id=self.client_id,
            redirect_uri=query["redirect_uri"],
            nonce=query.get("nonce"),
            challenge=query.get("code_challenge"),
            person=self.person,
        )
        back = {"code": code, "state": query.get("state", "")}
        return 302, {"Location": f"{query['redirect_uri']}?{urlencode(back)}"}, b""

    def token(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = decoded.partition(":")
        if client_id != self.client_id or secret != self.secret:
            return 401, {"error": "invalid_client"}
        grant = self.grants.pop(form.get("code", ""), None)  # a code is good once
        if form.get("grant_type") != "authorization_code" or grant is None:
            return 400, {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant.redirect_uri:
            return 400, {"error": "invalid_grant", "error_description": "redirect_uri"}
        if grant.challenge is not None:
            verifier = form.get("code_verifier", "").encode()
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if computed.decode() != grant.challenge:
                return 400, {"error": "invalid_grant", "error_description": "code_verifier"}
        access = secrets.token_urlsafe(24)
        self.tokens[access] = grant.person
        now = int(time.time())
        claims = {
            **self.claims(grant.person),
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
        }
        if grant.nonce:
            claims["nonce"] = grant.nonce
        id_token = jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": id_token,
        }

    def userinfo(self, authorization: str | None) -> tuple[int, dict[str, Any]]:
        token = (authorization or "").removeprefix("Bearer ").strip()
        person = self.tokens.get(token)
        if person is None:
            return 401, {"error": "invalid_token"}
        return 200, self.claims(person)


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parts = urlsplit(self.path)
            provider.requests.append(f"GET {parts.path}")
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/.well-known/openid-configuration":
                self._send(200, provider.discovery())
            elif parts.path == "/jwks":
                self._send(200, provider.jwks())
            elif parts.path == "/authorize":
                status, headers, body = provider.authorize(query)
                self._send(status, body, {"Content-Type": "text/plain", **headers})
            elif parts.path == "/userinfo":
                self._send(*provider.userinfo(self.headers.get("Authorization")))
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            parts = urlsplit(self.path)
            provider.requests.append(f"POST {parts.path}")
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if parts.path == "/token":
                self._send(*provider.token(form, self.headers.get("Authorization")))
            else:
                self._send(404, {"error": "not found"})

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def running_provider(client_id: str, secret: str, person: Person) -> Iterator[Provider]:
    """The provider, listening on a free port of 127.0.0.1 until the block ends."""
    provider = Provider(client_id=client_id, secret=secret, person=person)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    server.daemon_threads = True
    provider.issuer = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

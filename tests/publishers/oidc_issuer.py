"""A CI's OIDC issuer on 127.0.0.1, for the trusted publishing tests (issue 45 §1).

It plays GitHub Actions' token service: it serves its discovery document
(``/.well-known/openid-configuration``, naming its ``jwks_uri``) and its JWKS from a real HTTP
server, and mints RS256 ID tokens with keys made in the test, with GitHub's claims
(``repository``, ``workflow_ref``, ``job_workflow_ref``, ``environment``, ``jti``...). It can
rotate its key: the JWKS then publishes a new key (a new kid) and new tokens are signed with it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support import CardServer, running_server

JWKS_PATH = "/.well-known/jwks"
DISCOVERY_PATH = "/.well-known/openid-configuration"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class LocalIssuer:
    """Discovery, JWKS and minting; ``url`` is the issuer (the ``iss`` of its tokens)."""

    def __init__(self, server: CardServer) -> None:
        self.server = server
        self.url = server.origin
        self.kid = "key-1"
        self.key = new_key()
        self.rotations = 0
        server.serve(
            DISCOVERY_PATH,
            json.dumps({"issuer": self.url, "jwks_uri": self.url + JWKS_PATH}).encode(),
        )
        self._publish()

    def _publish(self) -> None:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": self.kid, "alg": "RS256", "use": "sig"})
        self.server.serve(JWKS_PATH, json.dumps({"keys": [jwk]}).encode())

    def rotate(self) -> None:
        """A new key with a new kid; the JWKS publishes only the new one."""
        self.rotations += 1
        self.kid = f"key-{self.rotations + 1}"
        self.key = new_key()
        self._publish()

    def jwks_fetches(self) -> int:
        return self.server.hits(JWKS_PATH)

    def claims(self, **changes: Any) -> dict[str, Any]:
        """GitHub's claims for a job of ``octo/agents``' release workflow, with ``changes``
        (a value None removes the claim)."""
        now = int(time.time())
        repository = changes.pop("repository", "octo/agents")
        workflow = changes.pop("workflow", ".github/workflows/release.yml")
        ref = f"{repository}/{workflow}@refs/heads/main"
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": "a2a-registry",
            "sub": f"repo:{repository}:environment:production",
            "repository": repository,
            "repository_owner": repository.split("/")[0],
            "workflow_ref": ref,
            "job_workflow_ref": ref,
            "environment": "production",
            "ref": "refs/heads/main",
            "jti": str(uuid.uuid4()),
            "iat": now,
            "nbf": now,
            "exp": now + 300,
        }
        claims.update(changes)
        return {name: value for name, value in claims.items() if value is not None}

    def mint(
        self, *, key: rsa.RSAPrivateKey | None = None, kid: str | None = None, **changes: Any
    ) -> str:
        """An ID token signed with the current key (or ``key``, under the current kid)."""
        return jwt.encode(
            self.claims(**changes),
            key or self.key,
            algorithm="RS256",
            headers={"kid": kid or self.kid},
        )


@contextmanager
def running_issuer() -> Iterator[LocalIssuer]:
    with running_server() as server:
        yield LocalIssuer(server)

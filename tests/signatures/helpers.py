"""Keys, signers and card builders shared by the signature tests.

Cards are signed with a2a-sdk's own ``create_agent_card_signer`` (the SDK canonical form);
``raw_sign`` and ``envelope`` sign other payloads with PyJWT for the raw-form and envelope
cases. Every key is generated here, in the test run.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import json
from functools import cache
from typing import Any

import rfc8785
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from google.protobuf.json_format import MessageToDict
from jwt import api_jws
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from cards.parsing import parse_card_bytes
from cards.signatures import JwksSource, SignatureReport, verify_document
from registry.http import FetchPolicy, fetch


def _no_dns(host: str, port: int) -> list[str]:
    # Tests use loopback IP literals only; a name reaching the resolver is a test bug, and it
    # must not turn into a real DNS query.
    raise OSError(f"no DNS in tests ({host})")


LOOPBACK_POLICY = FetchPolicy(
    resolver=_no_dns,
    allow_http=True,
    allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
    connect_timeout=2.0,
    read_timeout=3.0,
    total_timeout=5.0,
)

ALGORITHMS = (
    "EdDSA",
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
)


def new_key(alg: str) -> Any:
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    if alg.startswith("ES"):
        curve = {"ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}[alg]
        return ec.generate_private_key(curve)
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def shared_key(alg: str, slot: int = 0) -> Any:
    """One key per (key type, slot) for the whole run: RSA generation is slow."""
    return _family_key("RSA" if alg[:2] in ("RS", "PS") else alg, slot)


@cache
def _family_key(family: str, slot: int) -> Any:
    return new_key("RS256" if family == "RSA" else family)


def public_jwk(private: Any, kid: str | None, **extra: Any) -> dict[str, Any]:
    public = private.public_key()
    if isinstance(public, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    jwk = {k: v for k, v in jwk.items() if k in ("kty", "crv", "x", "y", "n", "e")}
    if kid is not None:
        jwk["kid"] = kid
    jwk.update(extra)
    return jwk


def jwks_bytes(*keys: dict[str, Any]) -> bytes:
    return json.dumps({"keys": list(keys)}).encode()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(value: Any) -> str:
    return b64(json.dumps(value, separators=(",", ":")).encode())


def card(origin: str = "https://agent.example.com", /, **extra: Any) -> dict[str, Any]:
    """A v1.0 card with non-ASCII text, as an a2a-sdk server would serve it."""
    base: dict[str, Any] = {
        "name": "Météo agent ☀",
        "description": "Forecasts for any city — “quoted” text",
        "supportedInterfaces": [
            {"url": f"{origin}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {"id": "forecast", "name": "Forecast", "description": "Weather", "tags": ["weather"]}
        ],
    }
    base.update(extra)
    return base


def sdk_signature(data: dict[str, Any], private: Any, header: dict[str, Any]) -> dict[str, Any]:
    """A signature made by a2a-sdk 1.3.0 over ``data`` (parsed as the SDK client would)."""
    unsigned = {k: v for k, v in copy.deepcopy(data).items() if k != "signatures"}
    proto = parse_agent_card(unsigned)
    signer = create_agent_card_signer(private, dict(header))  # type: ignore[arg-type]
    return MessageToDict(signer(proto))["signatures"][-1]


def sdk_sign(data: dict[str, Any], private: Any, **header: Any) -> dict[str, Any]:
    """``data`` with one more signature appended, made by a2a-sdk."""
    header.setdefault("typ", "JOSE")
    signed = copy.deepcopy(data)
    signed.setdefault("signatures", []).append(sdk_signature(data, private, header))
    return signed


def jws_parts(payload: bytes, private: Any, header: dict[str, Any]) -> tuple[str, str, str]:
    token = api_jws.encode(payload, private, algorithm=header["alg"], headers=header)
    protected, encoded, signature = token.split(".")
    return protected, encoded, signature


def raw_sign(data: dict[str, Any], private: Any, **header: Any) -> dict[str, Any]:
    """``data`` plus a signature over its raw form (served JSON minus signatures, RFC 8785)."""
    payload = rfc8785.dumps({k: v for k, v in data.items() if k != "signatures"})
    protected, _, signature = jws_parts(payload, private, header)
    signed = copy.deepcopy(data)
    signed.setdefault("signatures", []).append({"protected": protected, "signature": signature})
    return signed


def envelope(data: dict[str, Any], private: Any, **header: Any) -> dict[str, Any]:
    """A flattened JWS JSON document carrying the card (seed 004)."""
    payload = json.dumps(data, ensure_ascii=False).encode()
    protected, encoded, signature = jws_parts(payload, private, header)
    return {"payload": encoded, "protected": protected, "signature": signature}


def served(document: Any, *, indent: int | None = None, sort_keys: bool = False) -> bytes:
    return json.dumps(document, ensure_ascii=False, indent=indent, sort_keys=sort_keys).encode()


def crawl(
    card_url: str,
    source: JwksSource | None = None,
    pinned: dict[str, Any] | None = None,
) -> SignatureReport:
    """Fetch the card over HTTP, parse it and verify it, as a crawl does."""
    result = fetch(card_url, policy=LOOPBACK_POLICY)
    parsed = parse_card_bytes(result.body)
    return verify_document(
        data=parsed.data,
        envelope=parsed.envelope,
        card_url=result.url,
        pinned_jwks=pinned,
        jwks_source=source or JwksSource(policy=LOOPBACK_POLICY),
        findings=parsed.findings,
    )


def check(
    data: dict[str, Any],
    card_url: str = "https://agent.example.com/.well-known/agent-card.json",
    *,
    pinned: dict[str, Any] | None = None,
    source: JwksSource | None = None,
) -> SignatureReport:
    """Verify without fetching the card (pinned keys or loopback JWKS)."""
    return verify_document(
        data=data,
        envelope=None,
        card_url=card_url,
        pinned_jwks=pinned,
        jwks_source=source or JwksSource(policy=LOOPBACK_POLICY),
    )

"""JWK parsing, thumbprints, key type <-> algorithm, and protected-header policy (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed448, rsa

from cards.signatures import jose
from cards.signatures.binding import classify_jku, origin_of
from cards.signatures.keys import JwksError, parse_jwks, parse_jwks_bytes, parse_key, thumbprint
from tests.signatures.helpers import b64, b64json, public_jwk, shared_key

RFC7638_KEY = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSo"
    "c_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2Qvzq"
    "Y368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0f"
    "M4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}


def test_rfc7638_and_rfc8037_thumbprint_examples() -> None:
    assert thumbprint(RFC7638_KEY) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    okp = {"crv": "Ed25519", "kty": "OKP", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    assert thumbprint(okp) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    assert parse_key(RFC7638_KEY).thumbprint == thumbprint(RFC7638_KEY)


@pytest.mark.parametrize(
    ("alg", "other"),
    [
        ("EdDSA", "ES256"),
        ("ES256", "ES384"),
        ("ES384", "ES256"),
        ("ES512", "EdDSA"),
        ("RS256", "ES256"),
    ],
)
def test_the_key_type_decides_the_algorithm(alg: str, other: str) -> None:
    key = parse_key(public_jwk(shared_key(alg), "k"))
    assert key.refusal_for(alg) is None
    assert "cannot verify" in (key.refusal_for(other) or "")
    for refused in ("HS256", "none"):
        assert key.refusal_for(refused)


def test_rsa_keys_take_any_rsa_algorithm_unless_their_alg_says_otherwise() -> None:
    free = parse_key(public_jwk(shared_key("RS256"), "k"))
    assert all(free.refusal_for(a) is None for a in ("RS256", "RS512", "PS256", "PS384"))
    pinned_alg = parse_key(public_jwk(shared_key("RS256"), "k", alg="RS256"))
    assert "declared for 'RS256'" in (pinned_alg.refusal_for("PS256") or "")


def test_use_and_key_ops() -> None:
    enc = parse_key(public_jwk(shared_key("ES256"), "k", use="enc"))
    assert "use 'enc'" in (enc.refusal_for("ES256") or "")
    ops = parse_key(public_jwk(shared_key("ES256"), "k", key_ops=["encrypt"]))
    assert "key_ops" in (ops.refusal_for("ES256") or "")


def _rejection(jwk: Any) -> str:
    keyset = parse_jwks({"keys": [jwk]})
    assert keyset.keys == []
    return keyset.rejected[0][1]


def test_unusable_keys_are_rejected_with_a_reason() -> None:
    ed = public_jwk(shared_key("EdDSA"), "ed")
    assert "symmetric (oct)" in _rejection({"kty": "oct", "k": "c2VjcmV0", "kid": "h"})
    assert "private key material (d)" in _rejection({**ed, "d": "AAAA"})
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    assert "RSA-1024" in _rejection(public_jwk(small, "small"))
    assert "Ed448" in _rejection(public_jwk(ed448.Ed448PrivateKey.generate(), "e448"))
    k1 = ec.generate_private_key(ec.SECP256K1())
    assert "secp256k1" in _rejection(public_jwk(k1, "k1"))
    p256 = public_jwk(shared_key("ES256"), "p")
    off_curve = {**p256, "y": b64(b"\x01" * 32)}
    assert "p" in _rejection(off_curve)
    assert "not 32 bytes" in _rejection({**ed, "x": b64(b"\x01" * 31)})
    assert "not base64url" in _rejection({**ed, "x": "not base64!"})
    assert "'xyz' is not supported" in _rejection({"kty": "xyz"})
    assert "not a JSON object" in _rejection("a string")
    assert "kid" in _rejection({**ed, "kid": 7})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>", "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"", "empty"),
        (b"[]", "not a JSON object"),
        (b"{}", "no 'keys' member"),
        (b'{"keys": {}}', "not an array"),
        (b'{"keys": []}', "empty"),
        (json.dumps({"keys": [{}] * 101}).encode(), "at most 100"),
        (b'{"keys": [], "keys": []}', "more than once"),
        (b'{"keys": [NaN]}', "NaN"),
        (b"[" * 100000, "not valid JSON"),
    ],
)
def test_unusable_jwks_documents(body: bytes, message: str) -> None:
    with pytest.raises(JwksError, match=message):
        parse_jwks_bytes(body)


def test_a_key_without_kid_is_found_by_its_thumbprint() -> None:
    jwk = public_jwk(shared_key("EdDSA"), None)
    keyset = parse_jwks({"keys": [jwk]})
    assert keyset.find(thumbprint(jwk)) and not keyset.find("other")


@pytest.mark.parametrize(
    ("protected", "message"),
    [
        (None, "missing"),
        (7, "not a string"),
        ("", "empty"),
        ("a+b/", "not base64url"),
        ("eyJhbGciOiJFUzI1NiJ9==", "not base64url"),
        (b64(b"\xff\xfe"), "not UTF-8"),
        (b64(b"{not json"), "not valid JSON"),
        (b64(b'{"alg":"ES256","alg":"none"}'), "more than once"),
        (b64json(["alg", "ES256"]), "an array"),
        (b64json("ES256"), "a JSON scalar"),
        ("A" * 9000, "longer than"),
    ],
)
def test_malformed_protected_headers(protected: Any, message: str) -> None:
    header, reason = jose.parse_protected(protected)
    assert header is None and message in reason


@pytest.mark.parametrize(
    ("members", "outcome", "message"),
    [
        ({"kid": "k"}, "invalid", "no alg"),
        ({"alg": 256, "kid": "k"}, "invalid", "not a string"),
        ({"alg": "none", "kid": "k"}, "refused", "unsigned JWS"),
        ({"alg": "None", "kid": "k"}, "refused", "unsigned JWS"),
        ({"alg": "HS256", "kid": "k"}, "refused", "HMAC"),
        ({"alg": "HS512", "kid": "k"}, "refused", "HMAC"),
        ({"alg": "ES256K", "kid": "k"}, "refused", "not accepted"),
        ({"alg": "RSA1_5", "kid": "k"}, "refused", "not accepted"),
        ({"alg": "ES256", "kid": "k", "crit": ["exp"]}, "refused", "critical"),
        ({"alg": "ES256", "kid": "k", "b64": False, "crit": ["b64"]}, "refused", "critical"),
        ({"alg": "ES256", "kid": "k", "b64": False}, "refused", "b64"),
        ({"alg": "ES256"}, "invalid", "no kid"),
        ({"alg": "ES256", "kid": ""}, "invalid", "kid"),
        ({"alg": "ES256", "kid": ["k"]}, "invalid", "kid"),
    ],
)
def test_header_policy(members: dict[str, Any], outcome: str, message: str) -> None:
    header, _ = jose.parse_protected(b64json(members))
    assert header is not None
    problem = jose.header_problem(header)
    assert problem is not None and problem[0] == outcome and message in problem[1]


def test_accepted_header() -> None:
    header, _ = jose.parse_protected(b64json({"alg": "PS512", "kid": "k", "typ": "JOSE"}))
    assert header is not None and jose.header_problem(header) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "missing"),
        ("", "empty"),
        (5, "not a string"),
        ("abc=", "not base64url"),
        ("a", "base64url"),
    ],
)
def test_bad_signature_values(value: Any, message: str) -> None:
    sig, reason = jose.decode_signature(value)
    assert sig is None and message in reason


def test_origins_and_jku_binding() -> None:
    origin = origin_of("https://Agent.Example.com/.well-known/agent-card.json")
    assert (
        origin is not None
        and origin.well_known_jwks == "https://agent.example.com/.well-known/jwks.json"
    )
    assert classify_jku("https://agent.example.com:443/keys", origin, False)[0] == "bound"
    assert classify_jku("https://agent.example.com:8443/keys", origin, False)[0] == "foreign"
    assert classify_jku("https://keys.example.com/jwks", origin, False)[0] == "foreign"
    assert classify_jku("http://agent.example.com/keys", origin, True)[0] == "foreign"
    assert classify_jku("file:///etc/passwd", origin, True)[0] == "unusable"
    http_origin = origin_of("http://127.0.0.1:8000/card")
    assert classify_jku("http://127.0.0.1:8000/jwks", http_origin, True)[0] == "bound"
    kind, reason = classify_jku("http://127.0.0.1:8000/jwks", http_origin, False)
    assert kind == "foreign" and "http" in reason
    assert origin_of("not a url") is None and origin_of("ftp://x/y") is None

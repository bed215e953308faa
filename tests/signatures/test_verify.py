"""End to end: cards signed by a2a-sdk, served with their JWKS by loopback servers, crawled."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cards.signatures import JwksSource, thumbprint
from tests.signatures.helpers import (
    LOOPBACK_POLICY,
    card,
    crawl,
    envelope,
    jwks_bytes,
    public_jwk,
    raw_sign,
    sdk_sign,
    served,
    shared_key,
)
from tests.support import CardServer

CARD_PATH = "/.well-known/agent-card.json"
JWKS_PATH = "/.well-known/jwks.json"


def publish(site: CardServer, document: Any, **dump: Any) -> str:
    return site.serve(CARD_PATH, served(document, **dump))


def keys_at(site: CardServer, *jwks: dict[str, Any], path: str = JWKS_PATH) -> str:
    return site.serve(path, jwks_bytes(*jwks))


@pytest.mark.parametrize(
    "alg", ["EdDSA", "ES256", "ES384", "ES512", "RS256", "RS384", "PS256", "PS512"]
)
def test_sdk_signed_cards_verify_through_a_crawl(
    site: CardServer, source: JwksSource, alg: str
) -> None:
    key = shared_key(alg)
    jwk = public_jwk(key, "k1")
    keys_at(site, jwk)
    signed = sdk_sign(card(site.origin), key, alg=alg, kid="k1")
    report = crawl(publish(site, signed), source)
    assert report.status == "verified", report.as_dict()
    assert report.form == "a2a-sdk" and not report.transient
    assert report.thumbprints == [thumbprint(jwk)]
    (sig,) = report.as_dict()["signatures"]
    assert sig["key_source"] == "well-known" and sig["key_url"] == site.url(JWKS_PATH)
    assert sig["kid"] == "k1" and sig["alg"] == alg and sig["result"] == "verified"
    assert report.uncovered_fields == [] and "name" in report.covered_fields


def test_same_origin_jku(site: CardServer, source: JwksSource) -> None:
    key = shared_key("ES256")
    jku = keys_at(site, public_jwk(key, "k1"), path="/keys/agent.json")
    signed = sdk_sign(card(site.origin), key, alg="ES256", kid="k1", jku=jku)
    report = crawl(publish(site, signed), source)
    assert report.status == "verified"
    assert report.signatures[0].key_source == "jku" and report.signatures[0].key_url == jku
    assert site.hits(JWKS_PATH) == 0


def test_foreign_jku_is_unbound(
    site: CardServer, other_site: CardServer, source: JwksSource
) -> None:
    key = shared_key("EdDSA")
    jku = keys_at(other_site, public_jwk(key, "k1"))
    signed = sdk_sign(card(site.origin), key, alg="EdDSA", kid="k1", jku=jku)
    report = crawl(publish(site, signed), source)
    assert report.status == "unbound-key" and report.thumbprints == []
    sig = report.signatures[0]
    assert sig.result == "unbound-key" and sig.key_source == "foreign-jku" and sig.key_url == jku
    assert "not on the card's origin" in sig.reason and "404" in sig.reason
    assert site.hits(JWKS_PATH) == 1  # the bound source was tried first


def test_foreign_jku_is_not_needed_when_the_origin_has_the_key(
    site: CardServer, other_site: CardServer, source: JwksSource
) -> None:
    key = shared_key("EdDSA")
    keys_at(site, public_jwk(key, "k1"))
    jku = keys_at(other_site, public_jwk(key, "k1"))
    signed = sdk_sign(card(site.origin), key, alg="EdDSA", kid="k1", jku=jku)
    report = crawl(publish(site, signed), source)
    assert report.status == "verified" and report.signatures[0].key_source == "well-known"
    assert other_site.hits(JWKS_PATH) == 0


def test_foreign_jku_with_a_key_that_does_not_match(
    site: CardServer, other_site: CardServer, source: JwksSource
) -> None:
    jku = keys_at(other_site, public_jwk(shared_key("EdDSA", 1), "k1"))
    signed = sdk_sign(card(site.origin), shared_key("EdDSA"), alg="EdDSA", kid="k1", jku=jku)
    report = crawl(publish(site, signed), source)
    assert report.status == "invalid"
    sig = report.signatures[0]
    assert sig.result == "invalid" and sig.key_source == "foreign-jku"
    assert "does not match" in sig.reason and "404" in sig.reason  # the origin has no JWKS


def test_unprotected_jku_and_x5u_are_ignored(
    site: CardServer, other_site: CardServer, source: JwksSource
) -> None:
    key = shared_key("ES256")
    keys_at(other_site, public_jwk(key, "k1"))
    signed = sdk_sign(
        card(site.origin), key, alg="ES256", kid="k1", x5u=other_site.url("/cert.pem")
    )
    signed["signatures"][0]["header"] = {"jku": other_site.url(JWKS_PATH), "kid": "k1"}
    report = crawl(publish(site, signed), source)
    assert report.status == "key-unavailable" and report.signatures[0].result == "key-unavailable"
    assert other_site.requests == []


def test_one_changed_character_breaks_the_signature(site: CardServer, source: JwksSource) -> None:
    key = shared_key("ES256")
    keys_at(site, public_jwk(key, "k1"))
    signed = sdk_sign(card(site.origin), key, alg="ES256", kid="k1")
    signed["description"] = signed["description"].replace("F", "G", 1)
    report = crawl(publish(site, signed), source)
    assert report.status == "invalid" and report.form is None and report.thumbprints == []
    sig = report.signatures[0]
    assert sig.result == "invalid" and sig.thumbprint and "does not match key 'k1'" in sig.reason
    assert "a2a-sdk form (the raw form is the same bytes)" in sig.reason
    signed["x-vendor"] = 1  # now the two forms differ and both are tried
    sig = crawl(publish(site, signed), source).signatures[0]
    assert "the a2a-sdk form and the raw form" in sig.reason


def test_other_key_order_and_whitespace_still_verify(site: CardServer, source: JwksSource) -> None:
    key = shared_key("RS256")
    keys_at(site, public_jwk(key, "k1"))
    signed = sdk_sign(card(site.origin), key, alg="RS256", kid="k1")
    shuffled = {k: signed[k] for k in reversed(list(signed))}
    assert crawl(publish(site, shuffled, indent=4), source).status == "verified"
    assert crawl(publish(site, signed, sort_keys=True, indent="\t"), source).status == "verified"


def test_a_valid_signature_after_an_invalid_one(site: CardServer, source: JwksSource) -> None:
    key = shared_key("EdDSA")
    keys_at(site, public_jwk(key, "old"), public_jwk(key, "new"))
    other = sdk_sign(card(site.origin, name="another card"), key, alg="EdDSA", kid="old")
    signed = sdk_sign(card(site.origin), key, alg="EdDSA", kid="new")
    signed["signatures"].insert(0, other["signatures"][0])
    report = crawl(publish(site, signed), source)
    assert report.status == "verified"
    assert [s.result for s in report.signatures] == ["invalid", "verified"]
    assert "signature #1" in report.reason


def test_alg_none_is_refused(site: CardServer, source: JwksSource) -> None:
    keys_at(site, public_jwk(shared_key("EdDSA"), "k1"))
    data = card(site.origin)
    protected = _b64json({"alg": "none", "kid": "k1"})
    data["signatures"] = [{"protected": protected, "signature": ""}]
    report = crawl(publish(site, data), source)
    assert report.status == "invalid" and report.signatures[0].result == "refused"
    assert "unsigned JWS" in report.signatures[0].reason
    assert site.hits(JWKS_PATH) == 0


def test_hs256_keyed_with_the_public_key_is_refused(site: CardServer, source: JwksSource) -> None:
    import hashlib
    import hmac

    from cryptography.hazmat.primitives import serialization

    from cards.signatures.canonical import sdk_form
    from tests.signatures.helpers import b64

    key = shared_key("RS256")
    jwk = public_jwk(key, "k1")
    keys_at(site, jwk)
    data = card(site.origin)
    protected = _b64json({"alg": "HS256", "kid": "k1"})
    signing_input = f"{protected}.{sdk_form(data).encoded}".encode()
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    data["signatures"] = [
        {
            "protected": protected,
            "signature": b64(hmac.new(secret, signing_input, hashlib.sha256).digest()),
        }
        for secret in (pem, json.dumps(jwk).encode())
    ]
    report = crawl(publish(site, data), source)
    assert report.status == "invalid"
    assert all(s.result == "refused" and "HMAC" in s.reason for s in report.signatures)


def test_raw_form_signature_over_a_card_with_vendor_fields(
    site: CardServer, source: JwksSource
) -> None:
    key = shared_key("ES256")
    keys_at(site, public_jwk(key, "k1"))
    data = card(site.origin, schemas={"Order": {"type": "object"}}, **{"x-vendor": {"tier": 1.0}})
    report = crawl(publish(site, raw_sign(data, key, alg="ES256", kid="k1")), source)
    assert report.status == "verified" and report.form == "raw"
    assert report.uncovered_fields == [] and "x-vendor" in report.covered_fields


def test_sdk_form_leaves_vendor_fields_uncovered(site: CardServer, source: JwksSource) -> None:
    key = shared_key("ES256")
    keys_at(site, public_jwk(key, "k1"))
    data = card(site.origin, schemas={"Order": {"type": "object"}}, **{"x-vendor": "v"})
    report = crawl(publish(site, sdk_sign(data, key, alg="ES256", kid="k1")), source)
    assert report.status == "verified" and report.form == "a2a-sdk"
    assert report.uncovered_fields == ["schemas", "x-vendor"]
    # ...so changing them keeps the signature valid: the API has to say so.
    tampered = sdk_sign(data, key, alg="ES256", kid="k1")
    tampered["x-vendor"] = "changed"
    assert crawl(publish(site, tampered), source).status == "verified"


def test_envelope_document(site: CardServer, source: JwksSource) -> None:
    key = shared_key("EdDSA")
    keys_at(site, public_jwk(key, "k1"))
    data = card(site.origin, **{"x-vendor": 1})
    report = crawl(publish(site, envelope(data, key, alg="EdDSA", kid="k1")), source)
    assert report.status == "verified" and report.form == "envelope"
    assert report.uncovered_fields == [] and "x-vendor" in report.covered_fields
    assert report.signatures[0].index is None and report.signatures[0].form == "envelope"

    forged = envelope(data, key, alg="EdDSA", kid="k1")
    forged["payload"] = envelope(card(site.origin, name="Evil"), key, alg="EdDSA", kid="k1")[
        "payload"
    ]
    forged["signature"] = envelope(data, shared_key("EdDSA", 1), alg="EdDSA", kid="k1")["signature"]
    assert crawl(publish(site, forged), source).status == "invalid"


def test_key_rotation(site: CardServer, source: JwksSource) -> None:
    old, new = shared_key("ES256"), shared_key("ES256", 1)
    old_jwk, new_jwk = public_jwk(old, "2025"), public_jwk(new, "2026")
    keys_at(site, old_jwk)
    data = card(site.origin)
    first = crawl(publish(site, sdk_sign(data, old, alg="ES256", kid="2025")), source)
    assert first.status == "verified" and first.thumbprints == [thumbprint(old_jwk)]
    # The old key leaves the JWKS and the card is re-signed; the cached JWKS is refetched
    # because its kid is unknown.
    keys_at(site, new_jwk)
    second = crawl(publish(site, sdk_sign(data, new, alg="ES256", kid="2026")), source)
    assert second.status == "verified" and second.thumbprints == [thumbprint(new_jwk)]
    # A stale copy of the card signed with the removed key no longer verifies.
    stale = crawl(publish(site, sdk_sign(data, old, alg="ES256", kid="2025")), source)
    assert stale.status == "invalid" and "no key with kid '2025'" in stale.signatures[0].reason


def test_v0_3_card_signed_by_the_sdk(site: CardServer, source: JwksSource) -> None:
    key = shared_key("PS256")
    keys_at(site, public_jwk(key, "k1"))
    legacy = {
        "name": "legacy agent",
        "description": "v0.3 shape",
        "url": site.url("/rpc"),
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "version": "2",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
        "security": [{"oauth": ["read"]}],
        "securitySchemes": {"oauth": {"type": "oauth2", "flows": {}}},
    }
    report = crawl(publish(site, sdk_sign(legacy, key, alg="PS256", kid="k1")), source)
    assert report.status == "verified" and report.form == "a2a-sdk"
    assert {"url", "preferredTransport", "security"} <= set(report.covered_fields)


def test_pinned_keys_need_no_network() -> None:
    key = shared_key("EdDSA")
    jwk = public_jwk(key, "k1")
    signed = sdk_sign(card(), key, alg="EdDSA", kid="k1")
    from tests.signatures.helpers import check

    source = JwksSource(policy=LOOPBACK_POLICY)
    report = check(signed, pinned={"keys": [jwk]}, source=source)
    assert report.status == "verified" and report.signatures[0].key_source == "pinned"
    assert report.thumbprints == [thumbprint(jwk)] and source.fetches == 0


def test_jwks_unavailable_is_transient(site: CardServer, source: JwksSource) -> None:
    key = shared_key("EdDSA")
    site.serve(JWKS_PATH, b"try later", status=503)
    report = crawl(publish(site, sdk_sign(card(site.origin), key, alg="EdDSA", kid="k1")), source)
    assert report.status == "key-unavailable" and report.transient
    assert report.signatures[0].result == "key-unavailable" and "503" in report.reason


def test_jwks_missing_is_not_transient(site: CardServer, source: JwksSource) -> None:
    key = shared_key("EdDSA")
    report = crawl(publish(site, sdk_sign(card(site.origin), key, alg="EdDSA", kid="k1")), source)
    assert report.status == "key-unavailable" and not report.transient
    assert report.signatures[0].result == "key-unavailable" and "404" in report.signatures[0].reason


def _b64json(value: Any) -> str:
    from tests.signatures.helpers import b64json

    return b64json(value)


def test_the_input_card_is_not_modified(site: CardServer, source: JwksSource) -> None:
    from cards.signatures import verify_document

    key = shared_key("EdDSA")
    keys_at(site, public_jwk(key, "k1"))
    data = sdk_sign(
        card(site.origin, url=site.url("/x"), security=[{"a": []}]), key, alg="EdDSA", kid="k1"
    )
    before = copy.deepcopy(data)
    verify_document(data=data, card_url=site.url(CARD_PATH), jwks_source=source)
    assert data == before


# reference/a2a-agent-card.md section 6.2: fixed signatures over the worked-example card.
VECTOR_HS256 = {
    "protected": "eyJhbGciOiJIUzI1NiIsImprdSI6bnVsbCwia2lkIjoia2V5LTEiLCJ0eXAiOiJKT1NFIn0",
    "signature": "4WqE2Mw3Rrk5Dmyg6nddeDpg7D3PTUoCedVLXk4UiPg",
}
VECTOR_EDDSA = {
    "protected": "eyJhbGciOiJFZERTQSIsImprdSI6Imh0dHBzOi8vYWdlbnQuZXhhbXBsZS5jb20vLndlbGwta25vd24v"
    "andrcy5qc29uIiwia2lkIjoiZWQta2V5LTEiLCJ0eXAiOiJKT1NFIn0",
    "signature": "FYCp_-YaUxZZTvKg9zGi4ZnkyFoo453Q8R99XCuP3Ut3xDyggbn0wdOf10FIECSQR4S9CLi9C6M0f"
    "_We6gv8Bg",
}
VECTOR_JWK = {
    "kty": "OKP",
    "crv": "Ed25519",
    "x": "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg",
    "kid": "ed-key-1",
}


def test_reference_vectors(site: CardServer, source: JwksSource) -> None:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    from tests.signatures.helpers import b64, check
    from tests.signatures.test_canonical import VECTOR_CARD

    seed_key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    assert public_jwk(seed_key, "ed-key-1") == VECTOR_JWK
    data = {**VECTOR_CARD, "signatures": [VECTOR_HS256, VECTOR_EDDSA]}

    # Pinned keys: the vector's jku (agent.example.com) is bound but never needed.
    pinned = check(
        data,
        "https://agent.example.com/.well-known/agent-card.json",
        pinned={"keys": [VECTOR_JWK]},
        source=source,
    )
    assert pinned.status == "verified" and pinned.form == "a2a-sdk"
    assert [s.result for s in pinned.signatures] == ["refused", "verified"]
    assert "HMAC" in pinned.signatures[0].reason
    assert pinned.uncovered_fields == ["iconUrl"]  # "" is dropped by the a2a-sdk form

    # Served from a loopback origin: the jku is foreign, the origin's well-known JWKS is used.
    keys_at(site, VECTOR_JWK)
    served_report = crawl(publish(site, data), source)
    assert served_report.status == "verified"
    assert served_report.signatures[1].key_source == "well-known"
    assert served_report.thumbprints == [thumbprint(VECTOR_JWK)]
    assert b64(seed_key.public_key().public_bytes_raw()) == VECTOR_JWK["x"]


def test_envelope_around_a_card_with_detached_signatures(
    site: CardServer, source: JwksSource
) -> None:
    key = shared_key("ES256")
    keys_at(site, public_jwk(key, "k1"))
    inner = sdk_sign(card(site.origin), key, alg="ES256", kid="k1")
    doc = envelope(inner, shared_key("ES256", 1), alg="ES256", kid="k1")  # not the origin's key
    report = crawl(publish(site, doc), source)
    assert report.status == "verified" and report.form == "a2a-sdk"
    assert [(s.index, s.result) for s in report.signatures] == [(None, "invalid"), (0, "verified")]

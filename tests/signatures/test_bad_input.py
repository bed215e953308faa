"""The issue's bad-input list: each gets a precise outcome and reason, never a crash, never a
false ``verified``. The card is served and crawled from a loopback origin with its JWKS."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from cards.signatures import JwksSource, verify_document
from tests.signatures.helpers import (
    b64,
    b64json,
    card,
    crawl,
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
Doc = dict[str, Any]


def ed_signed(site: CardServer, **header: Any) -> Doc:
    header = {"alg": "EdDSA", "kid": "k1", **header}
    return sdk_sign(card(site.origin), shared_key("EdDSA"), **header)


def with_sig(doc: Doc, **changes: Any) -> Doc:
    doc["signatures"][0].update(changes)
    return doc


# (id, build the served document, JWKS body or None for the good one, status, result, reason)
Case = tuple[str, Callable[[CardServer], Any], bytes | None, str, str | None, str]


def _ed_jwks(**extra: Any) -> bytes:
    return jwks_bytes(public_jwk(shared_key("EdDSA"), "k1", **extra))


CASES: list[Case] = [
    (
        "protected-not-base64url",
        lambda s: with_sig(ed_signed(s), protected="e30=*"),
        None,
        "invalid",
        "invalid",
        "not base64url",
    ),
    (
        "protected-not-json",
        lambda s: with_sig(ed_signed(s), protected=b64(b"{alg")),
        None,
        "invalid",
        "invalid",
        "not valid JSON",
    ),
    (
        "protected-not-object",
        lambda s: with_sig(ed_signed(s), protected=b64json(["EdDSA"])),
        None,
        "invalid",
        "invalid",
        "an array, not an object",
    ),
    (
        "protected-not-string",
        lambda s: with_sig(ed_signed(s), protected={"alg": "EdDSA"}),
        None,
        "invalid",
        "invalid",
        "not a string",
    ),
    (
        "missing-kid",
        lambda s: sdk_sign(card(s.origin), shared_key("EdDSA"), alg="EdDSA"),
        None,
        "invalid",
        "invalid",
        "no kid",
    ),
    (
        "kid-only-unprotected",
        lambda s: with_sig(
            sdk_sign(card(s.origin), shared_key("EdDSA"), alg="EdDSA"), header={"kid": "k1"}
        ),
        None,
        "invalid",
        "invalid",
        "unprotected header is not signed",
    ),
    (
        "unknown-kid",
        lambda s: ed_signed(s, kid="k9"),
        None,
        "invalid",
        "invalid",
        "no key with kid 'k9'",
    ),
    (
        "empty-signature",
        lambda s: with_sig(ed_signed(s), signature=""),
        None,
        "invalid",
        "invalid",
        "the signature is empty",
    ),
    (
        "signature-not-base64url",
        lambda s: with_sig(ed_signed(s), signature="a/b+"),
        None,
        "invalid",
        "invalid",
        "not base64url",
    ),
    (
        "signature-wrong-length",
        lambda s: with_sig(ed_signed(s), signature=b64(b"x" * 10)),
        None,
        "invalid",
        "invalid",
        "10 bytes",
    ),
    (
        "signature-missing",
        lambda s: with_sig(ed_signed(s), signature=None),
        None,
        "invalid",
        "invalid",
        "the signature member is missing",
    ),
    (
        "protected-empty-object",
        lambda s: with_sig(ed_signed(s), protected="e30"),
        None,
        "invalid",
        "invalid",
        "no alg",
    ),
    (
        "entry-not-object",
        lambda s: {**card(s.origin), "signatures": ["sig"]},
        None,
        "invalid",
        "invalid",
        "not a JSON object",
    ),
    (
        "signatures-not-array",
        lambda s: {**card(s.origin), "signatures": {"protected": "x"}},
        None,
        "invalid",
        None,
        "'signatures' member is not an array",
    ),
    (
        "signatures-empty",
        lambda s: {**card(s.origin), "signatures": []},
        None,
        "unsigned",
        None,
        "no signatures",
    ),
    (
        "placeholder-signature",  # corpus 065
        lambda s: {
            **card(s.origin),
            "signatures": [
                {
                    "protected": "(jws-protected-header-placeholder)",
                    "signature": "(jws-signature-placeholder)",
                }
            ],
        },
        None,
        "invalid",
        "invalid",
        "not base64url",
    ),
    (
        "jwks-huge",
        ed_signed,
        b'{"keys":[' + b'{"kty":"OKP"},' * 6000 + b"{}]}",
        "key-unavailable",
        "key-unavailable",
        "larger than 64 KiB",
    ),
    (
        "jwks-not-json",
        ed_signed,
        b"<html>keys</html>",
        "key-unavailable",
        "key-unavailable",
        "not valid JSON",
    ),
    (
        "jwks-no-keys",
        ed_signed,
        b'{"issuer": "x"}',
        "key-unavailable",
        "key-unavailable",
        "no 'keys' member",
    ),
    (
        "jwks-empty-keys",
        ed_signed,
        b'{"keys": []}',
        "key-unavailable",
        "key-unavailable",
        "'keys' array is empty",
    ),
    (
        "jwks-symmetric-key",
        ed_signed,
        jwks_bytes({"kty": "oct", "kid": "k1", "k": "c2VjcmV0"}),
        "invalid",
        "refused",
        "symmetric (oct)",
    ),
    (
        "jwks-unknown-key-type",
        ed_signed,
        jwks_bytes({"kty": "PQC", "kid": "k1"}),
        "invalid",
        "refused",
        "'PQC' is not supported",
    ),
    (
        "jwks-private-key",
        ed_signed,
        _ed_jwks(d="AAAA"),
        "invalid",
        "refused",
        "private key material",
    ),
    (
        "jwks-other-keys-only",
        ed_signed,
        jwks_bytes({"kty": "oct", "kid": "h", "k": "c2VjcmV0"}),
        "invalid",
        "invalid",
        "0 usable keys, 1 rejected",
    ),
    ("jwks-key-for-encryption", ed_signed, _ed_jwks(use="enc"), "invalid", "refused", "use 'enc'"),
    (
        "key-type-mismatch",  # ES256 header, kid names an RSA key
        lambda s: sdk_sign(card(s.origin), shared_key("ES256"), alg="ES256", kid="k1"),
        jwks_bytes(public_jwk(shared_key("RS256"), "k1")),
        "invalid",
        "refused",
        "cannot verify ES256",
    ),
    (
        "curve-mismatch",
        lambda s: sdk_sign(card(s.origin), shared_key("ES384"), alg="ES384", kid="k1"),
        jwks_bytes(public_jwk(shared_key("ES256"), "k1")),
        "invalid",
        "refused",
        "cannot verify ES384",
    ),
    (
        "alg-cannot-downgrade",  # the JWK says PS256; an RS256 signature by the same key is refused
        lambda s: sdk_sign(card(s.origin), shared_key("RS256"), alg="RS256", kid="k1"),
        jwks_bytes(public_jwk(shared_key("RS256"), "k1", alg="PS256")),
        "invalid",
        "refused",
        "declared for 'PS256'",
    ),
    (
        "jku-refused-address",
        lambda s: ed_signed(s, jku="http://169.254.169.254/latest/jwks.json"),
        b"",
        "key-unavailable",
        "key-unavailable",
        "169.254.169.254",
    ),
    (
        "jku-not-a-url",
        lambda s: ed_signed(s, jku="file:///etc/passwd"),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "alg-unknown",
        lambda s: with_sig(ed_signed(s), protected=b64json({"alg": "ES256K", "kid": "k1"})),
        None,
        "invalid",
        "refused",
        "not accepted",
    ),
    ("crit", lambda s: ed_signed(s, crit=["exp"], exp=1), None, "invalid", "refused", "critical"),
    (
        "non-ascii-text",
        lambda s: sdk_sign(
            card(s.origin, name="名前 🤖 «agent»", description="ünïcödé\u2028"),
            shared_key("EdDSA"),
            alg="EdDSA",
            kid="k1",
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "emoji-keys-in-params",
        lambda s: sdk_sign(
            card(
                s.origin,
                capabilities={
                    "extensions": [{"uri": "urn:e", "params": {"😀": 1, "\uffff": 2, "é": 3}}]
                },
            ),
            shared_key("EdDSA"),
            alg="EdDSA",
            kid="k1",
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "emoji-keys-raw-form",
        lambda s: raw_sign(
            card(s.origin, **{"x-😀": 1, "x-\uffff": 2}), shared_key("EdDSA"), alg="EdDSA", kid="k1"
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "float-1.0",
        lambda s: sdk_sign(
            card(
                s.origin,
                capabilities={"extensions": [{"uri": "urn:e", "params": {"n": 1.0, "m": 2.50}}]},
            ),
            shared_key("EdDSA"),
            alg="EdDSA",
            kid="k1",
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "float-1.0-raw-form",
        lambda s: raw_sign(
            card(s.origin, **{"x-n": 1.0, "x-e": 1e-7}), shared_key("EdDSA"), alg="EdDSA", kid="k1"
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "big-int-in-params",
        lambda s: sdk_sign(
            card(
                s.origin,
                capabilities={"extensions": [{"uri": "urn:e", "params": {"big": 2**64 + 1}}]},
            ),
            shared_key("EdDSA"),
            alg="EdDSA",
            kid="k1",
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "big-int-vendor-field",
        lambda s: sdk_sign(
            card(s.origin, **{"x-big": 2**64}), shared_key("EdDSA"), alg="EdDSA", kid="k1"
        ),
        None,
        "verified",
        "verified",
        "",
    ),
    (
        "big-int-naive-raw-signer",  # signed over json.dumps: no RFC 8785 form exists
        lambda s: _naive_raw(card(s.origin, **{"x-big": 2**64})),
        None,
        "invalid",
        "invalid",
        "beyond ±(2^53-1)",
    ),
    (
        "no-canonical-form",
        lambda s: {
            **card(s.origin, name=7, **{"x-big": 2**64}),
            "signatures": ed_signed(s)["signatures"],
        },
        None,
        "invalid",
        "invalid",
        "no canonical payload",
    ),
]


def _naive_raw(data: Doc) -> Doc:
    from tests.signatures.helpers import jws_parts

    payload = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    protected, _, signature = jws_parts(payload, shared_key("EdDSA"), {"alg": "EdDSA", "kid": "k1"})
    return {**data, "signatures": [{"protected": protected, "signature": signature}]}


@pytest.mark.parametrize(
    ("name", "build", "jwks", "status", "result", "reason"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input(
    site: CardServer,
    source: JwksSource,
    name: str,
    build: Callable[[CardServer], Any],
    jwks: bytes | None,
    status: str,
    result: str | None,
    reason: str,
) -> None:
    site.serve(JWKS_PATH, _ed_jwks() if jwks is None else jwks)
    if jwks == b"":
        site.routes.pop(JWKS_PATH)  # 404
    url = site.serve(CARD_PATH, served(build(site)))
    report = crawl(url, source)
    assert report.status == status, report.as_dict()
    if result is None:
        assert reason in report.reason, report.reason
        return
    sig = report.signatures[0]
    assert sig.result == result, sig
    assert reason in sig.reason, sig.reason
    assert not report.transient


def test_duplicate_signatures_are_counted_once(site: CardServer, source: JwksSource) -> None:
    site.serve(JWKS_PATH, _ed_jwks())
    doc = ed_signed(site)
    doc["signatures"].append(copy.deepcopy(doc["signatures"][0]))
    report = crawl(site.serve(CARD_PATH, served(doc)), source)
    assert report.status == "verified"
    assert [s.result for s in report.signatures] == ["verified", "refused"]
    assert "duplicate of signature #0" in report.signatures[1].reason
    assert site.hits(JWKS_PATH) == 1


def test_duplicate_invalid_signatures(site: CardServer, source: JwksSource) -> None:
    site.serve(JWKS_PATH, _ed_jwks())
    doc = with_sig(ed_signed(site), signature=b64(b"\x01" * 64))
    doc["signatures"].append(copy.deepcopy(doc["signatures"][0]))
    report = crawl(site.serve(CARD_PATH, served(doc)), source)
    assert report.status == "invalid"
    assert [s.result for s in report.signatures] == ["invalid", "refused"]


def test_duplicate_json_keys_are_never_verified(site: CardServer, source: JwksSource) -> None:
    site.serve(JWKS_PATH, _ed_jwks())
    body = served(ed_signed(site))
    # The served text names the card twice: the first name is what some parsers show.
    body = body.replace(b'{"name": ', b'{"name": "Evil twin", "name": ', 1)
    report = crawl(site.serve(CARD_PATH, body), source)
    assert report.status == "invalid"
    assert report.signatures[0].result == "refused"
    assert "repeats JSON keys" in report.signatures[0].reason


def test_a_card_url_without_origin(source: JwksSource) -> None:
    doc = sdk_sign(card(), shared_key("EdDSA"), alg="EdDSA", kid="k1")
    report = verify_document(data=doc, card_url="not a url", jwks_source=source)
    assert report.status == "key-unavailable" and report.signatures[0].result == "key-unavailable"
    assert "no http(s) origin" in report.signatures[0].reason


def test_an_unusable_pinned_jwks_falls_back_to_the_origin(
    site: CardServer, source: JwksSource
) -> None:
    from django.core.cache import cache

    site.serve(JWKS_PATH, _ed_jwks())
    doc = ed_signed(site)
    report = verify_document(
        data=doc, card_url=site.url(CARD_PATH), pinned_jwks={"keys": "x"}, jwks_source=source
    )
    assert report.status == "verified" and report.signatures[0].key_source == "well-known"
    wrong = {"keys": [public_jwk(shared_key("EdDSA", 1), "k1")]}
    site.routes.pop(JWKS_PATH)
    cache.clear()
    report = verify_document(
        data=doc, card_url=site.url(CARD_PATH), pinned_jwks=wrong, jwks_source=source
    )
    assert report.status == "invalid" and report.signatures[0].result == "invalid"
    assert "the pinned keys" in report.signatures[0].reason


@pytest.mark.parametrize(
    ("data", "envelope", "status"),
    [
        (None, None, "unsigned"),
        ({}, None, "unsigned"),
        ("a string", None, "unsigned"),
        ({"signatures": None}, None, "unsigned"),
        (None, {"payload": 5, "protected": "e30", "signature": "x"}, "invalid"),
        (None, {"payload": "e30", "protected": None, "signature": None}, "invalid"),
        (
            {"signatures": [None, 1, [], {"protected": {}}, {"protected": "e30", "signature": 1}]},
            None,
            "invalid",
        ),
    ],
)
def test_odd_documents(
    data: Any, envelope: Any, status: str, site: CardServer, source: JwksSource
) -> None:
    report = verify_document(
        data=data, envelope=envelope, card_url=site.url("/"), jwks_source=source
    )
    assert report.status == status
    json.dumps(report.as_dict())  # always serialisable


def _mutations(rng: random.Random, doc: Doc) -> Doc:
    mutated = copy.deepcopy(doc)
    sig = mutated["signatures"][0]
    junk: list[Any] = [None, 0, -1, 1.5, True, "", "e30", "AAAA", [], {}, "😀", "a" * 5000]
    choice = rng.randrange(7)
    if choice == 0:
        sig["protected"] = rng.choice(junk)
    elif choice == 1:
        sig["signature"] = rng.choice(junk)
    elif choice == 2:
        header = {
            "alg": rng.choice(["EdDSA", "none", "HS256", "ES256", 5, None]),
            "kid": rng.choice(["k1", "", None, 3, "k2"]),
            rng.choice(["jku", "crit", "b64", "x5u"]): rng.choice(junk),
        }
        sig["protected"] = b64json(header)
    elif choice == 3:
        mutated["signatures"] = rng.choice(junk)
    elif choice == 4:
        sig["header"] = {"kid": rng.choice(junk), "jku": "http://127.0.0.2/x"}
        sig["signature"] = b64(rng.randbytes(64))
    elif choice == 5:
        mutated[rng.choice(["name", "skills", "capabilities", "x-v"])] = rng.choice(junk)
    else:
        mutated["signatures"].insert(0, rng.choice(junk))
        mutated["version"] = "tampered"
    return mutated


def test_fuzzed_signatures_never_crash_and_never_verify(
    site: CardServer, source: JwksSource
) -> None:
    site.serve(JWKS_PATH, _ed_jwks())
    doc = ed_signed(site)
    rng = random.Random(3)
    for _ in range(300):
        mutated = _mutations(rng, doc)
        report = verify_document(data=mutated, card_url=site.url(CARD_PATH), jwks_source=source)
        if report.status == "verified":  # only when the valid signature survived untouched
            assert doc["signatures"][0] in (mutated.get("signatures") or [])
            assert {k: v for k, v in mutated.items() if k != "signatures"} == {
                k: v for k, v in doc.items() if k != "signatures"
            } or report.uncovered_fields
        json.dumps(report.as_dict())


def test_signatures_beyond_the_limit_are_not_checked(site: CardServer, source: JwksSource) -> None:
    from cards.signatures.entries import MAX_SIGNATURES

    site.serve(JWKS_PATH, _ed_jwks())
    junk = with_sig(ed_signed(site), signature=b64(b"\x02" * 64))["signatures"][0]
    doc = ed_signed(site)
    good = doc["signatures"][0]
    doc["signatures"] = [
        {**junk, "signature": b64(bytes([i]) * 64)} for i in range(MAX_SIGNATURES)
    ] + [good]
    report = crawl(site.serve(CARD_PATH, served(doc)), source)
    assert report.status == "invalid"
    assert report.signatures[-1].result == "refused"
    assert "only the first 16 signatures" in report.signatures[-1].reason


def test_key_urls_per_card_are_bounded(
    site: CardServer, other_site: CardServer, source: JwksSource
) -> None:
    from cards.signatures.verify import MAX_JWKS_URLS

    doc = card(site.origin)
    doc["signatures"] = [
        ed_signed(site, jku=other_site.url(f"/jwks-{i}.json"))["signatures"][0] for i in range(8)
    ]
    report = crawl(site.serve(CARD_PATH, served(doc)), source)
    assert report.status == "key-unavailable"
    fetched = {path for path, _ in site.requests + other_site.requests if "jwks" in path}
    assert len(fetched) == MAX_JWKS_URLS  # the well-known JWKS and three foreign ones
    assert "more than 4 key URLs" in report.signatures[-1].reason

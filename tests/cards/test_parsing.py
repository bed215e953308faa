from __future__ import annotations

import base64
import copy
import csv
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from cards.parsing import ParsedDocument, detect_shape, normalise_card, parse_card_bytes, pipeline
from registry.findings import Finding, counts, extend_pointer, json_pointer

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus"
requires_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the card corpus is not at {CORPUS} (../shared is absent)"
)


def corpus_file(prefix: str) -> Path:
    [path] = sorted((CORPUS / "cards").glob(f"{prefix}-*.json"))
    return path


def codes(doc: ParsedDocument) -> list[str]:
    return [finding.code for finding in doc.findings]


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


V1_CARD: dict[str, Any] = {
    "name": "Echo",
    "description": "Echoes",
    "supportedInterfaces": [
        {
            "url": "https://echo.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ],
    "version": "1.0.0",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"]}],
}


# --- findings helpers ---------------------------------------------------------------------


def test_json_pointers_escape_tilde_before_slash() -> None:
    assert json_pointer() == ""
    assert json_pointer("skills", 2, "id") == "/skills/2/id"
    assert json_pointer("a/b", "m~n", "~1") == "/a~1b/m~0n/~01"
    assert extend_pointer("/securitySchemes", "x/y") == "/securitySchemes/x~1y"


def test_counts_always_has_all_three_severities() -> None:
    findings = [
        Finding("a", "error", "", ""),
        Finding("b", "error", "", ""),
        Finding("c", "info", "", ""),
    ]

    assert counts(findings) == {"error": 2, "warning": 0, "info": 1}
    assert counts([]) == {"error": 0, "warning": 0, "info": 0}


def test_a_finding_serialises_to_a_plain_dict() -> None:
    finding = Finding("json.bom", "warning", "", "BOM")

    assert finding.as_dict() == {
        "code": "json.bom",
        "severity": "warning",
        "pointer": "",
        "message": "BOM",
    }


# --- bytes to JSON ------------------------------------------------------------------------


def test_a_well_formed_v1_card_parses_without_findings() -> None:
    raw = json.dumps(V1_CARD).encode()

    doc = parse_card_bytes(raw)

    assert doc.findings == []
    assert doc.raw == raw
    assert doc.data == V1_CARD
    assert doc.shape == "v1.0"
    assert doc.card == V1_CARD
    assert doc.envelope is None


def test_invalid_utf8_is_an_error_with_the_byte_offset() -> None:
    doc = parse_card_bytes(b'{"name": "caf\xe9"}')

    assert codes(doc) == ["json.invalid-utf8"]
    assert doc.findings[0].severity == "error"
    assert "byte offset 13" in doc.findings[0].message
    assert doc.data is None and doc.card is None


def test_a_utf8_bom_is_accepted_with_a_warning() -> None:
    doc = parse_card_bytes(b"\xef\xbb\xbf" + json.dumps(V1_CARD).encode())

    assert codes(doc) == ["json.bom"]
    assert doc.findings[0].severity == "warning"
    assert doc.data == V1_CARD


def test_invalid_json_is_an_error_with_line_and_column() -> None:
    doc = parse_card_bytes(b'{\n  "name": "x",\n}\n')

    assert codes(doc) == ["json.invalid"]
    assert "line 3 column 1" in doc.findings[0].message
    assert doc.data is None


@pytest.mark.parametrize("raw", [b"", b"\n", b" \r\n\t ", b"\xef\xbb\xbf"])
def test_an_empty_document_is_an_error(raw: bytes) -> None:
    doc = parse_card_bytes(raw)

    assert "json.empty" in codes(doc)
    assert doc.data is None


def test_duplicate_keys_are_errors_pointing_at_their_object() -> None:
    raw = b'{"name": "a", "skills": [{"id": "x", "id": "y"}], "name": "b"}'

    doc = parse_card_bytes(raw)

    found = {(f.code, f.pointer) for f in doc.findings}
    assert found == {("json.duplicate-key", ""), ("json.duplicate-key", "/skills/0")}
    assert all(f.severity == "error" for f in doc.findings)
    assert doc.data is not None
    assert doc.data["name"] == "b"  # the last value wins, as in most parsers
    assert doc.data["skills"][0]["id"] == "y"


def test_a_duplicate_key_inside_a_discarded_value_is_still_reported() -> None:
    doc = parse_card_bytes(b'{"a": {"k": 1, "k": 2}, "a": 3}')

    assert codes(doc).count("json.duplicate-key") == 2


def test_a_hundred_thousand_open_brackets_are_too_deep_and_quick() -> None:
    started = time.monotonic()

    doc = parse_card_bytes(b"[" * 100_000)

    assert codes(doc) == ["json.too-deep"]
    assert time.monotonic() - started < 1.0


def test_deep_objects_inside_an_object_are_too_deep_even_if_well_formed() -> None:
    raw = ('{"a":' * 70 + "1" + "}" * 70).encode()

    assert codes(parse_card_bytes(raw)) == ["json.too-deep"]
    assert parse_card_bytes(raw, max_depth=100).findings == []


def test_brackets_inside_strings_do_not_count_towards_depth() -> None:
    raw = json.dumps({"name": "[" * 500 + '\\"{' * 100}).encode()

    doc = parse_card_bytes(raw)

    assert "json.too-deep" not in codes(doc)
    assert doc.data is not None


def test_nesting_exactly_at_the_limit_is_accepted() -> None:
    raw = ('{"a":' + "[" * 63 + "]" * 63 + "}").encode()

    assert "json.too-deep" not in codes(parse_card_bytes(raw, max_depth=64))


def test_nan_and_infinity_are_errors_and_read_as_null() -> None:
    doc = parse_card_bytes(b'{"a": NaN, "b": [Infinity, -Infinity], "c": 1e400, "d": 1.5}')

    found = sorted((f.code, f.pointer) for f in doc.findings)
    assert found == [
        ("json.non-finite", "/a"),
        ("json.non-finite", "/b/0"),
        ("json.non-finite", "/b/1"),
        ("json.non-finite", "/c"),
    ]
    assert doc.data == {"a": None, "b": [None, None], "c": None, "d": 1.5}


def test_unpaired_surrogate_escapes_are_errors_and_replaced() -> None:
    doc = parse_card_bytes(b'{"name": "a\\ud800b", "\\udc00": 1, "ok": "\\ud83d\\ude00"}')

    assert sorted((f.code, f.pointer) for f in doc.findings) == [
        ("json.lone-surrogate", "/name"),
        ("json.lone-surrogate", "/\ufffd"),
    ]
    assert doc.data == {"name": "a\ufffdb", "\ufffd": 1, "ok": "\U0001f600"}
    # Everything, findings included, can be stored as UTF-8.
    stored = json.dumps([doc.data, [f.as_dict() for f in doc.findings]], ensure_ascii=False)
    stored.encode("utf-8")


@pytest.mark.parametrize("raw", [b"[]", b'"card"', b"42", b"null", b"true"])
def test_a_top_level_value_that_is_not_an_object_is_an_error(raw: bytes) -> None:
    doc = parse_card_bytes(raw)

    assert codes(doc) == ["json.not-object"]
    assert doc.data is None and doc.card is None and doc.shape == "unknown"


def test_an_integer_too_long_to_convert_is_invalid_json_not_an_exception() -> None:
    doc = parse_card_bytes(b'{"n": ' + b"9" * 10_000 + b"}")

    assert codes(doc) == ["json.invalid"]


def test_parsing_never_raises_on_random_or_mangled_input() -> None:
    rng = random.Random(8785)
    seed = json.dumps(V1_CARD).encode()
    samples = [bytes(rng.randrange(256) for _ in range(rng.randrange(64))) for _ in range(300)]
    for _ in range(300):
        mangled = bytearray(seed)
        for _ in range(rng.randrange(1, 6)):
            mangled[rng.randrange(len(mangled))] = rng.choice(b'{}[]",:\\\x00\xff0 ')
        samples.append(bytes(mangled))
    for raw in samples:
        doc = parse_card_bytes(raw)
        assert isinstance(doc, ParsedDocument)
        assert doc.data is not None or any(f.severity == "error" for f in doc.findings)


def test_a_parser_bug_becomes_a_finding_instead_of_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(raw: bytes, max_depth: int) -> None:
        raise AssertionError("bug")

    monkeypatch.setattr(pipeline, "decode_json", broken)

    doc = parse_card_bytes(b"{}")

    assert [(f.code, f.severity) for f in doc.findings] == [("parse.internal-error", "error")]
    assert doc.data is None


def test_bytearray_and_memoryview_input_are_read_like_bytes() -> None:
    raw = json.dumps(V1_CARD).encode()

    assert parse_card_bytes(bytearray(raw)).data == V1_CARD
    assert parse_card_bytes(memoryview(raw)).raw == raw


# --- JWS envelope -------------------------------------------------------------------------


def envelope_for(payload: str, **extra: Any) -> bytes:
    protected = b64url(b'{"alg":"EdDSA","kid":"did:example:agent#key-1"}')
    envelope = {"payload": payload, "protected": protected, "signature": "c2ln", **extra}
    return json.dumps(envelope).encode()


def test_an_envelope_is_opened_and_the_card_inside_is_parsed() -> None:
    raw = envelope_for(b64url(json.dumps(V1_CARD).encode()))

    doc = parse_card_bytes(raw)

    assert doc.data == V1_CARD
    assert doc.card == V1_CARD
    assert doc.shape == "v1.0"
    assert doc.envelope is not None
    assert set(doc.envelope) == {"payload", "protected", "signature"}
    assert [(f.code, f.severity) for f in doc.findings] == [("envelope.unverified", "info")]


def test_findings_about_the_card_inside_an_envelope_point_into_that_card() -> None:
    inner = b'{"name": "a", "skills": [{"id": 1, "id": 2}]}'

    doc = parse_card_bytes(envelope_for(b64url(inner)))

    assert ("json.duplicate-key", "/skills/0") in {(f.code, f.pointer) for f in doc.findings}


@pytest.mark.parametrize(
    "payload",
    [
        "not base64url!",
        "eyJhIjoxfQ==",  # padded: JWS uses base64url without padding
        "a",  # an impossible length
        b64url(b"not json"),
        b64url(b"[1, 2]"),
        b64url(b'{"name": "caf\xe9"}'),
        b64url(b""),
        b64url(b"[" * 1000),
    ],
)
def test_a_payload_that_is_not_a_base64url_json_object_is_a_bad_payload(payload: str) -> None:
    doc = parse_card_bytes(envelope_for(payload))

    assert "envelope.bad-payload" in codes(doc)
    assert doc.data is None and doc.card is None
    assert doc.envelope is not None


def test_a_payload_that_is_not_a_string_is_a_bad_payload() -> None:
    raw = json.dumps({"payload": {"name": "x"}, "protected": "e30", "signature": "c2ln"}).encode()

    assert "envelope.bad-payload" in codes(parse_card_bytes(raw))


def test_extra_envelope_members_are_a_warning_but_header_is_expected() -> None:
    payload = b64url(json.dumps(V1_CARD).encode())

    with_header = parse_card_bytes(envelope_for(payload, header={"kid": "k"}))
    with_extra = parse_card_bytes(envelope_for(payload, note="hi"))

    assert "envelope.extra-members" not in codes(with_header)
    assert "envelope.extra-members" in codes(with_extra)
    assert with_extra.data == V1_CARD


def test_a_card_with_a_signature_member_is_not_mistaken_for_an_envelope() -> None:
    card = {**V1_CARD, "payload": "x", "protected": "y", "signature": "z"}

    doc = parse_card_bytes(json.dumps(card).encode())

    assert doc.envelope is None
    assert doc.data == card


# --- shape detection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        ({"supportedInterfaces": []}, "v1.0"),
        ({"supportedInterfaces": [], "url": "https://a.example", "protocolVersion": "0.3"}, "v1.0"),
        ({"url": "https://a.example", "preferredTransport": "JSONRPC"}, "v0.3"),
        ({"url": "https://a.example", "additionalInterfaces": []}, "v0.3"),
        ({"url": "https://a.example", "protocolVersion": "0.3.0"}, "v0.3"),
        ({"url": "https://a.example", "protocolVersion": "0.2.9"}, "v0.2"),
        ({"url": "https://a.example", "protocolVersion": "1.0"}, "v0.2"),
        ({"url": ""}, "v0.2"),
        ({"name": "x", "protocolVersion": "1.0"}, "unknown"),
        ({}, "unknown"),
    ],
)
def test_the_shape_comes_from_the_layout_not_the_declared_version(
    data: dict[str, Any], shape: str
) -> None:
    assert detect_shape(data) == shape


# Two corpus files are labelled "other" by hand although their layout is a card's: 011 is a
# v1.0 fragment (name + supportedInterfaces) and 074 a v0.2 layout with snake_case keys.
# Reading them as v1.0/v0.2 gives the more useful findings (missing fields, snake_case keys).
MANIFEST_JUDGEMENT_CALLS = {
    "cards/011-a2a-docs-multitenancy-tenant.json": "v1.0",
    "cards/074-inference-gateway-static-snakecase.json": "v0.2",
}


@pytest.mark.needs_shared
@requires_corpus
def test_detected_shapes_agree_with_the_corpus_manifest() -> None:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 77
    for row in rows:
        doc = parse_card_bytes((CORPUS / row["file"]).read_bytes())
        if doc.data is None:
            continue  # 001, 006 and 056 do not parse; covered in test_rules.py
        expected = "unknown" if row["shape"] == "other" else row["shape"]
        expected = MANIFEST_JUDGEMENT_CALLS.get(row["file"], expected)
        assert doc.shape == expected, row["file"]


# --- normalisation ------------------------------------------------------------------------


RPC, GRPC = "https://a.example/rpc", "https://a.example/grpc"
OIDC = "https://id.example/.well-known/openid-configuration"


def test_a_v03_card_is_normalised_to_the_v1_shape() -> None:
    data = {
        "name": "A",
        "url": RPC,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [
            {"url": RPC, "transport": "JSONRPC"},
            {"url": GRPC, "transport": "GRPC"},
        ],
        "supportsAuthenticatedExtendedCard": True,
        "capabilities": {"streaming": True, "stateTransitionHistory": True},
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-Key", "description": "d"},
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": OIDC},
            "oauth": {"type": "oauth2", "flows": {}},
            "mtls": {"type": "mutualTLS"},
        },
        "security": [{"key": [], "bearer": ["read"]}],
        "skills": [{"id": "s", "security": [{"oidc": ["openid"]}], "inputFields": [{"name": "q"}]}],
        "schemas": {"fight": {"type": "object"}},
        "x-owner": "team",
    }
    original = copy.deepcopy(data)

    card = normalise_card(data, "v0.3")

    assert data == original  # a new dict; the served JSON is left alone
    assert card == {
        "name": "A",
        "supportedInterfaces": [
            {"url": RPC, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
            {"url": GRPC, "protocolBinding": "GRPC", "protocolVersion": "0.3.0"},
        ],
        "capabilities": {"streaming": True, "extendedAgentCard": True},
        "securitySchemes": {
            "key": {
                "apiKeySecurityScheme": {"location": "header", "name": "X-Key", "description": "d"}
            },
            "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": OIDC}},
            "oauth": {"oauth2SecurityScheme": {"flows": {}}},
            "mtls": {"mtlsSecurityScheme": {}},
        },
        "securityRequirements": [{"schemes": {"key": {"list": []}, "bearer": {"list": ["read"]}}}],
        "skills": [
            {
                "id": "s",
                "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}],
                "inputFields": [{"name": "q"}],
            }
        ],
        "schemas": {"fight": {"type": "object"}},
        "x-owner": "team",
    }


def test_missing_transport_and_protocol_version_take_the_v03_defaults() -> None:
    card = normalise_card({"url": "https://a.example"}, "v0.2")

    assert card["supportedInterfaces"] == [
        {"url": "https://a.example", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}
    ]


def test_a_declared_protocol_version_is_kept_on_every_interface() -> None:
    data = {
        "url": "https://a.example",
        "protocolVersion": "0.2.9",
        "additionalInterfaces": [{"url": "https://a.example/json", "transport": "HTTP+JSON"}],
    }

    interfaces = normalise_card(data, "v0.3")["supportedInterfaces"]

    assert [i["protocolVersion"] for i in interfaces] == ["0.2.9", "0.2.9"]


def test_v1_hybrids_lose_their_v0_members_but_keep_their_interfaces() -> None:
    data = {
        **V1_CARD,
        "url": "https://other.example",
        "protocolVersion": "1.0",
        "supportsExtendedAgentCard": False,
        "security": [{"google": ["openid"]}],
        "capabilities": {"stateTransitionHistory": False, "extendedAgentCard": True},
    }

    card = normalise_card(data, "v1.0")

    assert card["supportedInterfaces"] == V1_CARD["supportedInterfaces"]
    assert card["capabilities"] == {"extendedAgentCard": True}
    assert card["securityRequirements"] == [{"schemes": {"google": {"list": ["openid"]}}}]
    for gone in ("url", "protocolVersion", "supportsExtendedAgentCard", "security"):
        assert gone not in card


def test_v1_requirements_and_interfaces_in_draft_spellings_are_read_leniently() -> None:
    data = {
        "supportedInterfaces": [{"url": "https://a.example", "transport": "jsonrpc"}],
        "securityRequirements": [{"bearer": []}, {"schemes": {"bearer": []}}],
    }

    card = normalise_card(data, "v1.0")

    assert card["supportedInterfaces"] == [
        {"url": "https://a.example", "protocolBinding": "jsonrpc"}
    ]
    assert card["securityRequirements"] == [
        {"schemes": {"bearer": {"list": []}}},
        {"schemes": {"bearer": {"list": []}}},
    ]


WEIRD_VALUES: list[Any] = [None, True, 0, 1.5, "", "text", [], [None, 1, "x", []], {}, {"a": []}]
NORMALISED_KEYS = [
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
    "supportedInterfaces",
    "supportsAuthenticatedExtendedCard",
    "supportsExtendedAgentCard",
    "capabilities",
    "security",
    "securityRequirements",
    "securitySchemes",
    "skills",
]


@pytest.mark.parametrize("key", NORMALISED_KEYS)
@pytest.mark.parametrize("value", WEIRD_VALUES, ids=repr)
def test_normalisation_tolerates_wrong_types_anywhere(key: str, value: Any) -> None:
    data = {"url": "https://a.example", "supportsAuthenticatedExtendedCard": True, key: value}
    nested = {
        "url": "https://a.example",
        "skills": [{"security": value}, value],
        "securitySchemes": {"a": value, "b": {"type": "apiKey", "in": value}},
        "security": [value, {"a": value}],
        "additionalInterfaces": [value, {"url": value, "transport": value}],
        "capabilities": value,
    }

    for shape in ("v0.2", "v0.3", "v1.0", "unknown"):
        assert isinstance(normalise_card(data, shape), dict)  # type: ignore[arg-type]
        assert isinstance(normalise_card(nested, shape), dict)  # type: ignore[arg-type]


def test_wrong_typed_extended_card_flags_stay_where_they_are_for_the_rules() -> None:
    data = {"url": "https://a.example", "supportsAuthenticatedExtendedCard": "yes"}

    card = normalise_card(data, "v0.2")

    assert card["supportsAuthenticatedExtendedCard"] == "yes"
    assert "capabilities" not in card


@pytest.mark.needs_shared
@requires_corpus
def test_the_v03_spec_sample_normalises_like_the_v1_spec_sample() -> None:
    v03 = parse_card_bytes(corpus_file("003").read_bytes())
    v10 = parse_card_bytes(corpus_file("004").read_bytes())
    assert v03.shape == "v0.3" and v03.card is not None and v10.card is not None

    interfaces = v03.card["supportedInterfaces"]

    assert [(i["url"], i["protocolBinding"]) for i in interfaces] == [
        ("https://georoute-agent.example.com/a2a/v1", "JSONRPC"),
        ("https://georoute-agent.example.com/a2a/grpc", "GRPC"),
        ("https://georoute-agent.example.com/a2a/json", "HTTP+JSON"),
    ]
    # The v0.3 sample declares 0.2.9; the declared value is kept, not replaced by a default.
    assert {i["protocolVersion"] for i in interfaces} == {"0.2.9"}
    assert v03.card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    assert v03.card["securityRequirements"] == [
        {"schemes": {"google": {"list": ["openid", "profile", "email"]}}}
    ]
    # Apart from the protocol version the two samples describe the same agent.
    for key in ("securitySchemes", "securityRequirements", "capabilities", "skills", "signatures"):
        assert v03.card[key] == v10.card[key], key
    assert set(v03.card) == set(v10.card)


@pytest.mark.needs_shared
@requires_corpus
def test_the_v02_spec_sample_gets_one_jsonrpc_interface() -> None:
    doc = parse_card_bytes(corpus_file("002").read_bytes())
    assert doc.shape == "v0.2" and doc.card is not None

    assert doc.card["supportedInterfaces"] == [
        {
            "url": "https://georoute-agent.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.2.9",
        }
    ]
    assert doc.card["capabilities"]["extendedAgentCard"] is True
    for gone in ("url", "protocolVersion", "security", "supportsAuthenticatedExtendedCard"):
        assert gone not in doc.card

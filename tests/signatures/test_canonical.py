"""Canonical payloads: the reference vectors, byte parity with a2a-sdk 1.3.0, RFC 8785, coverage."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.signing import _canonicalize_agent_card
from google.protobuf.json_format import MessageToDict

from cards.parsing import parse_card_bytes
from cards.signatures.canonical import CanonicalError, coverage, jcs, raw_form, sdk_form
from tests.signatures.helpers import card

# reference/a2a-agent-card.md section 6.2
VECTOR_CARD = json.loads(
    """{"name":"Test Agent","description":"A test agent",
 "supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC",
   "protocolVersion":"1.0"}],
 "version":"1.0.0",
 "capabilities":{"streaming":false,"pushNotifications":true,
   "extensions":[{"uri":"https://example.com/ext/x/v1","required":false,
     "params":{"n":1,"f":1.5,"s":"é"}}]},
 "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"skill1","name":"Test Skill","description":"A test skill","tags":["test"]}],
 "iconUrl":""}"""
)
VECTOR_PAYLOAD = (
    '{"capabilities":{"extensions":[{"params":{"f":1.5,"n":1,"s":"é"},'
    '"uri":"https://example.com/ext/x/v1"}],"pushNotifications":true,"streaming":false},'
    '"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],'
    '"description":"A test agent","name":"Test Agent","skills":[{"description":"A test skill",'
    '"id":"skill1","name":"Test Skill","tags":["test"]}],"supportedInterfaces":[{'
    '"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://agent.example.com/a2a"}],'
    '"version":"1.0.0"}'
)
VECTOR_B64 = (
    "eyJjYXBhYmlsaXRpZXMiOnsiZXh0ZW5zaW9ucyI6W3sicGFyYW1zIjp7ImYiOjEuNSwibiI6MSwicyI6IsOpIn0sInVy"
    "aSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vZXh0L3gvdjEifV0sInB1c2hOb3RpZmljYXRpb25zIjp0cnVlLCJzdHJlYW1p"
    "bmciOmZhbHNlfSwiZGVmYXVsdElucHV0TW9kZXMiOlsidGV4dC9wbGFpbiJdLCJkZWZhdWx0T3V0cHV0TW9kZXMiOlsi"
    "dGV4dC9wbGFpbiJdLCJkZXNjcmlwdGlvbiI6IkEgdGVzdCBhZ2VudCIsIm5hbWUiOiJUZXN0IEFnZW50Iiwic2tpbGxz"
    "IjpbeyJkZXNjcmlwdGlvbiI6IkEgdGVzdCBza2lsbCIsImlkIjoic2tpbGwxIiwibmFtZSI6IlRlc3QgU2tpbGwiLCJ0"
    "YWdzIjpbInRlc3QiXX1dLCJzdXBwb3J0ZWRJbnRlcmZhY2VzIjpbeyJwcm90b2NvbEJpbmRpbmciOiJKU09OUlBDIiwi"
    "cHJvdG9jb2xWZXJzaW9uIjoiMS4wIiwidXJsIjoiaHR0cHM6Ly9hZ2VudC5leGFtcGxlLmNvbS9hMmEifV0sInZlcnNp"
    "b24iOiIxLjAuMCJ9"
)


def sdk_reference(data: dict[str, Any]) -> bytes | None:
    """a2a-sdk 1.3.0's own canonical bytes (its private function, used here as the oracle)."""
    unsigned = {k: v for k, v in copy.deepcopy(data).items() if k != "signatures"}
    try:
        return _canonicalize_agent_card(parse_agent_card(unsigned)).encode("utf-8")
    except Exception:  # noqa: BLE001 - "no canonical form" is an outcome to compare
        return None


def ours(data: dict[str, Any]) -> bytes | None:
    try:
        return sdk_form(data).payload
    except CanonicalError:
        return None


def test_section_6_2_worked_example() -> None:
    form = sdk_form(VECTOR_CARD)
    assert form.payload.decode("utf-8") == VECTOR_PAYLOAD
    assert form.encoded == VECTOR_B64
    assert "iconUrl" not in form.keys


def test_section_6_1_repository_vector() -> None:
    proto = AgentCard(
        name="Test Agent",
        description="A test agent",
        supported_interfaces=[AgentInterface(url="http://localhost", protocol_binding="HTTP+JSON")],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=None, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        documentation_url=None,
        icon_url="",
        skills=[
            AgentSkill(id="skill1", name="Test Skill", description="A test skill", tags=["test"])
        ],
    )
    expected = (
        '{"capabilities":{"pushNotifications":true},"defaultInputModes":["text/plain"],'
        '"defaultOutputModes":["text/plain"],"description":"A test agent","name":"Test Agent",'
        '"skills":[{"description":"A test skill","id":"skill1","name":"Test Skill",'
        '"tags":["test"]}],'
        '"supportedInterfaces":[{"protocolBinding":"HTTP+JSON","url":"http://localhost"}],'
        '"version":"1.0.0"}'
    )
    assert sdk_form(MessageToDict(proto)).payload.decode() == expected


def test_section_6_2_d_spec_example_under_the_sdk() -> None:
    spec_card = {
        "name": "Example Agent",
        "description": "",
        "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []},
        "skills": [],
    }
    assert sdk_form(spec_card).payload == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}'
    )


TRICKY_CARDS: list[dict[str, Any]] = [
    VECTOR_CARD,
    card(),
    card(**{"x-vendor": {"a": 1}, "schemas": {"s": {"type": "object"}}}),
    # v0.3 shape: url/preferredTransport/additionalInterfaces/security folded by the SDK
    {
        "name": "legacy",
        "description": "v0.3",
        "url": "https://a.example/rpc",
        "preferredTransport": "HTTP+JSON",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [{"url": "https://a.example/grpc", "transport": "GRPC"}],
        "version": "1",
        "capabilities": {},
        "supportsAuthenticatedExtendedCard": True,
        "security": [{"oauth": ["read"]}, {"bearer": []}],
        "securitySchemes": {
            "oauth": {"type": "oauth2", "flows": {}},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        },
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [
            {"id": "s", "name": "S", "description": "d", "tags": [], "security": [{"k": []}]}
        ],
    },
    # numbers, emoji keys, nulls, nested empties inside Struct params
    card(
        capabilities={
            "extensions": [
                {
                    "uri": "urn:x",
                    "params": {
                        "😀": 1.0,
                        "\uffff": "bmp-max",
                        "big": 2**60,
                        "tiny": 1e-7,
                        "huge": 1e21,
                        "neg": -0.0,
                        "null": None,
                        "empty": {"a": [], "b": {"c": ""}},
                        "nested": [[], [1, 2.5, "é"], {}],
                        "ctl": 'tab\tquote"back\\slash\u0001',
                    },
                }
            ]
        }
    ),
    card(iconUrl="", documentationUrl="https://docs.example", provider={"organization": ""}),
    # snake_case names are accepted by ParseDict
    {"name": "snake", "default_input_modes": ["a"], "supported_interfaces": [{"url": "u"}]},
    {},
    {"name": 5},  # the SDK cannot read it: neither can we
    {"name": "x", "skills": "not a list"},
    {"name": "x", "capabilities": "nope", "supportsAuthenticatedExtendedCard": True},
]


@pytest.mark.parametrize("data", TRICKY_CARDS, ids=range(len(TRICKY_CARDS)))
def test_sdk_form_is_byte_identical_to_a2a_sdk(data: dict[str, Any]) -> None:
    before = copy.deepcopy(data)
    assert ours(data) == sdk_reference(data)
    assert data == before  # the served card is not modified


@pytest.mark.needs_shared
def test_sdk_form_matches_a2a_sdk_on_the_whole_corpus(shared_dir: Path) -> None:
    compared = 0
    for path in sorted((shared_dir / "corpus" / "cards").glob("*.json")):
        parsed = parse_card_bytes(path.read_bytes())
        if parsed.data is None:
            continue
        before = copy.deepcopy(parsed.data)
        assert ours(parsed.data) == sdk_reference(parsed.data), path.name
        assert parsed.data == before, path.name
        compared += 1
    assert compared > 50


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**53) + 1, 2**53 - 1)
    if kind == 2:
        return rng.choice([0.1, 1.0, -2.5, 1e-7, 1e-6, 123456789.125, 1e21, 1e20, 5e-324, 2.0**60])
    if kind == 3:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 25)
    if kind == 4:
        return "".join(rng.choice('aé😀\u2028\x00\t"\\z\uffff') for _ in range(rng.randrange(6)))
    keys = ["a", "b", "é", "😀", "\uffff", "\ue000", "A", "aa", "", "€"]
    if kind in (5, 6):
        return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def test_fast_rfc8785_equals_the_rfc8785_package() -> None:
    rng = random.Random(8785)
    for _ in range(3000):
        value = _random_value(rng)
        assert jcs(value)[0] == rfc8785.dumps(value), value


def test_rfc8785_key_order_is_utf16() -> None:
    # U+1F600 is D83D DE00 in UTF-16: it sorts before U+FFFF (code point order says after).
    assert jcs({"\uffff": 1, "😀": 2, "a": 3})[0] == '{"a":3,"😀":2,"\uffff":1}'.encode()


def test_raw_form_numbers_and_text() -> None:
    form = raw_form({"n": 1.0, "t": "é", "signatures": [1], "e": 1e-7})
    assert form.payload == '{"e":1e-7,"n":1,"t":"é"}'.encode()
    assert form.keys == frozenset({"n", "t", "e"})


@pytest.mark.parametrize("big", [2**53, -(2**53), 10**30])
def test_integers_beyond_2_53_have_no_raw_form(big: int) -> None:
    with pytest.raises(CanonicalError, match="beyond"):
        raw_form({"n": big})


def test_lone_surrogates_have_no_form() -> None:
    with pytest.raises(CanonicalError, match="Unicode"):
        raw_form({"t": "\ud800"})
    with pytest.raises(CanonicalError):
        raw_form({"\ud800😀": 1})


def test_deep_nesting_has_no_form() -> None:
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(CanonicalError, match="depth"):
        raw_form({"d": deep})


def test_coverage_under_the_sdk_form() -> None:
    data = card(
        iconUrl="",
        schemas={"in": {}},
        **{"x-vendor": 1},
        securityRequirements=[{"schemes": {"bearer": {"list": []}}}],
        signatures=[],
    )
    form = sdk_form(data)
    covered, uncovered = coverage(data, "a2a-sdk", form.keys)
    assert uncovered == ["iconUrl", "schemas", "securityRequirements", "x-vendor"]
    assert "signatures" not in covered + uncovered
    assert "name" in covered and "supportedInterfaces" in covered


def test_coverage_of_folded_v0_3_fields() -> None:
    data = TRICKY_CARDS[3]
    covered, uncovered = coverage(data, "a2a-sdk", sdk_form(data).keys)
    for name in ("url", "preferredTransport", "protocolVersion", "additionalInterfaces"):
        assert name in covered
    assert "security" in covered and "supportsAuthenticatedExtendedCard" in covered
    assert uncovered == []


def test_coverage_when_v1_fields_win_over_legacy_ones() -> None:
    data = card(url="https://elsewhere.example", security=[{"k": ["s"]}], securityRequirements=[])
    covered, uncovered = coverage(data, "a2a-sdk", sdk_form(data).keys)
    assert "url" in uncovered and "security" in uncovered


def test_coverage_of_raw_envelope_and_nothing() -> None:
    data = card(**{"x-vendor": 1})
    assert coverage(data, "raw", frozenset())[1] == []
    assert coverage(data, "envelope", frozenset())[1] == []
    assert coverage(data, None, frozenset())[0] == []
    assert "x-vendor" in coverage(data, None, frozenset())[1]

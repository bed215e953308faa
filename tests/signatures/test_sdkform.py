"""The plain-Python a2a-sdk form against the SDK's own protobuf round trip, byte for byte."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cards.parsing import parse_card_bytes
from cards.signatures import canonical
from cards.signatures.canonical import CanonicalError, sdk_form, sdk_form_fast, sdk_form_reference
from tests.signatures.cardgen import Generator
from tests.signatures.helpers import card

GENERATED = 3000


def reference(data: dict[str, Any]) -> bytes | str:
    try:
        return sdk_form_reference(data).payload
    except CanonicalError as exc:
        return f"error: {exc}"


def memoised(data: dict[str, Any]) -> bytes | str:
    try:
        return sdk_form(data).payload
    except CanonicalError as exc:
        return f"error: {exc}"


def compare(data: dict[str, Any]) -> tuple[bool, bool]:
    """(fast path taken, SDK can read it); fails on any difference from the SDK."""
    before = copy.deepcopy(data)
    expected = reference(data)
    fast = sdk_form_fast(data)
    if fast is not None:
        assert fast.payload == expected, data
        assert fast.keys == frozenset(canonical.sdk_form_reference(data).keys)
    assert memoised(data) == expected, data
    assert data == before  # neither path modifies the served card
    return fast is not None, isinstance(expected, bytes)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    canonical.clear_memo()


@pytest.mark.needs_shared
def test_every_corpus_card_matches_the_sdk(shared_dir: Path) -> None:
    readable, left_to_the_sdk = 0, []
    for path in sorted((shared_dir / "corpus" / "cards").glob("*.json")):
        parsed = parse_card_bytes(path.read_bytes())
        if parsed.data is None:
            continue
        fast, sdk_reads = compare(parsed.data)
        readable += sdk_reads
        if sdk_reads and not fast:
            left_to_the_sdk.append(path.name)
    assert readable > 50
    # Every corpus card the SDK can read, v0.2 and v0.3 shapes included, takes the fast path.
    assert left_to_the_sdk == []


def test_thousands_of_generated_cards_match_the_sdk() -> None:
    generator = Generator(seed=20261124)
    fast_count = readable = fast_legacy = 0
    for _ in range(GENERATED):
        data = generator.card()
        fast, sdk_reads = compare(data)
        fast_count += fast
        readable += sdk_reads
        fast_legacy += fast and sdk_reads and ("url" in data or "securitySchemes" in data)
    # The generator makes about 40% of its cards unreadable (wrong types, nulls in lists,
    # two oneof members, ...); of the rest the fast path must take nearly all.
    assert readable > GENERATED // 2
    assert fast_count > 0.95 * readable
    assert fast_legacy > GENERATED // 10


@pytest.mark.parametrize(
    "data",
    [
        card(capabilities={"extensions": [{"uri": "u", "params": {"big": 2**60}}]}),
        card(capabilities={"extensions": [{"uri": "u", "params": {"nan": float("nan")}}]}),
        card(iconUrl="a", icon_url="b"),
        {**card(provider={"organization": "o"}), "[ext.name]": 1},
        card(name="lone \ud800 surrogate"),
        card(skills="not a list"),
    ],
    ids=["int-beyond-2^53", "nan", "both-spellings", "extension-key", "surrogate", "skills"],
)
def test_what_the_fast_path_leaves_to_the_sdk(data: dict[str, Any]) -> None:
    assert sdk_form_fast(data) is None
    assert memoised(data) == reference(data)


def test_v0_3_shapes_are_mapped_as_parse_agent_card_does() -> None:
    legacy = {
        "name": "legacy",
        "url": "https://a.example/rpc",
        "additionalInterfaces": [{"url": "https://a.example/grpc", "transport": "GRPC"}],
        "supportsAuthenticatedExtendedCard": True,
        "capabilities": ["streaming-ish"],
        "security": [{"oauth": ["read"]}],
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        "skills": [{"id": "s", "security": [{"key": []}]}],
    }
    with pytest.raises(CanonicalError):
        sdk_form_reference(legacy)  # capabilities is a list: the SDK cannot add to it
    del legacy["capabilities"]
    fast = sdk_form_fast(legacy)
    assert fast is not None and fast.payload == sdk_form_reference(legacy).payload
    assert b'"apiKeySecurityScheme":{"location":"header","name":"X-Key"}' in fast.payload
    assert b'"capabilities":{"extendedAgentCard":true}' in fast.payload


def test_the_memo_returns_the_same_form_for_the_same_content() -> None:
    data = card()
    first = sdk_form(data)
    assert sdk_form(copy.deepcopy(data)) is first
    changed = card(name="another name")
    assert sdk_form(changed).payload != first.payload
    assert canonical.raw_form(data) is canonical.raw_form(copy.deepcopy(data))


def test_the_memo_remembers_failures_and_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = {"name": 5}
    with pytest.raises(CanonicalError, match="a2a-sdk cannot read this card") as first:
        sdk_form(broken)
    with pytest.raises(CanonicalError) as second:
        sdk_form(broken)
    assert str(second.value) == str(first.value)
    monkeypatch.setattr(canonical, "MEMO_SIZE", 8)
    for index in range(20):
        sdk_form(card(name=f"agent {index}"))
    assert len(canonical._MEMO) <= 8


def test_values_without_a_json_text_are_not_memoised() -> None:
    data: dict[str, Any] = card()
    data["x-set"] = {1, 2}  # not JSON: no content digest, built every time
    assert canonical.content_digest(data) is None
    assert sdk_form(data).payload == sdk_form_reference(data).payload
    assert len(canonical._MEMO) == 0

from __future__ import annotations

import json
from typing import Any

from cards.ard.manifest import read

URL = "https://acme.com/.well-known/ard.json"


def entry(identifier: str, **extra: Any) -> dict[str, Any]:
    return {
        "identifier": identifier,
        "displayName": identifier.rsplit(":", 1)[-1],
        "type": "application/a2a-agent-card+json",
        "url": "https://acme.com/a.json",
        "representativeQueries": ["one", "two"],
        **extra,
    }


def codes(report: Any) -> list[str]:
    return [f.code for f in report.findings]


def test_good_manifest() -> None:
    doc = {
        "specVersion": "1.0",
        "entries": [
            entry("urn:air:acme.com:a2a:a"),
            {
                "identifier": "urn:air:acme.com:mcp:w",
                "displayName": "W",
                "type": "application/mcp-server-card+json",
                "url": "https://acme.com/w",
            },
        ],
    }
    report = read(json.dumps(doc).encode(), manifest_url=URL, max_entries=10)
    assert report.ok and codes(report) == []
    assert [a.identifier for a in report.agents] == ["urn:air:acme.com:a2a:a"]
    assert report.type_counts == {
        "application/a2a-agent-card+json": 1,
        "application/mcp-server-card+json": 1,
    }
    assert report.other_entries[0]["type"] == "application/mcp-server-card+json"


def test_publisher_authority_refuses_a_foreign_identifier() -> None:
    doc = {
        "entries": [
            entry("urn:air:google.com:a2a:tax"),
            entry("urn:air:api.acme.com:a2a:b", url="https://acme.com/b.json"),
        ]
    }
    report = read(json.dumps(doc).encode(), manifest_url=URL, max_entries=10)
    assert "ard.publisher-authority" in codes(report)
    assert [a.identifier for a in report.agents] == [None, "urn:air:api.acme.com:a2a:b"]


def test_value_or_reference_duplicates_and_queries() -> None:
    both = entry("urn:air:acme.com:a2a:both", data={"name": "x"})
    dup = entry("urn:air:acme.com:a2a:a", url="https://acme.com/c.json")
    few = entry(
        "urn:air:acme.com:a2a:few",
        url="https://acme.com/d.json",
        representativeQueries=["only one"],
    )
    doc = {"entries": [entry("urn:air:acme.com:a2a:a"), both, dup, few]}
    report = read(json.dumps(doc).encode(), manifest_url=URL, max_entries=10)
    found = codes(report)
    assert "ard.value-or-reference" in found and "ard.duplicate-identifier" in found
    assert "ard.representative-queries" in found and "ard.schema" in found


def test_trust_identity_mismatch_is_flagged() -> None:
    doc = {
        "entries": [
            entry("urn:air:acme.com:a2a:a", trustManifest={"identity": "spiffe://evil.com/a"})
        ]
    }
    report = read(json.dumps(doc).encode(), manifest_url=URL, max_entries=10)
    assert "ard.trust-identity" in codes(report)


def test_hostile_manifests_are_findings_not_crashes() -> None:
    deep = b'{"entries": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert "json.too-deep" in codes(read(deep, manifest_url=URL, max_entries=10))
    assert not read(b"\xff\xfe", manifest_url=URL, max_entries=10).ok
    assert not read(b'{"entries": 3}', manifest_url=URL, max_entries=10).ok
    many = {
        "entries": [
            entry(f"urn:air:acme.com:a2a:n{i}", url=f"https://acme.com/{i}.json")
            for i in range(3000)
        ]
    }
    report = read(json.dumps(many).encode(), manifest_url=URL, max_entries=500)
    assert "ard.too-many-entries" in codes(report) and len(report.agents) == 500

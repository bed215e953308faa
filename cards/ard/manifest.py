"""Reading an ARD manifest: bytes -> entries and findings, with no database and no network.

What it checks (docs/ard.md, "Manifests"): JSON (depth, duplicates, encoding), the ARD entry
schema, the entry count cap, value-or-reference, identifier shape, the publisher-authority rule
(ARD 4.5.1: the identifier's publisher must be the manifest's own domain or one of its
subdomains), trustManifest.identity alignment, duplicate identifiers and representativeQueries;
and ``url_authority``, the same rule for the card URLs a manifest lists.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from cards.ard import identifiers
from cards.ard.schema import MANIFEST
from cards.parsing.json_decoding import decode_json
from registry.findings import Finding

A2A_TYPES = frozenset({"application/a2a-agent-card+json", "application/agent-card+json"})
MAX_DEPTH = 32
MAX_SCHEMA_FINDINGS = 50
_VALIDATOR = jsonschema_rs.validator_for(MANIFEST)
_TERMS = ("description", "version", "updatedAt", "metadata", "trustManifest", "@context")


def finding(code: str, severity: str, pointer: str, message: str) -> Finding:
    return Finding(code=code, severity=severity, pointer=pointer, message=message)  # type: ignore[arg-type]


@dataclass
class AgentEntry:
    """An A2A entry that becomes (or updates) an agent."""

    index: int
    identifier: str | None  # None: refused or absent; the agent gets a derived one
    display_name: str
    url: str | None
    data: dict[str, Any] | None
    terms: dict[str, Any]
    capabilities: list[str]


@dataclass
class ManifestReport:
    ok: bool = False
    spec_version: str = ""
    host: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    agents: list[AgentEntry] = field(default_factory=list)
    other_entries: list[dict[str, Any]] = field(default_factory=list)
    type_counts: dict[str, int] = field(default_factory=dict)
    entry_count: int = 0


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_and_port(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return scheme, "", None
    host = (parts.hostname or "").lower().rstrip(".")
    return scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def url_authority(manifest_url: str, card_url: str) -> bool:
    """May the manifest at ``manifest_url`` speak for the card at ``card_url``?

    Yes when the card has the manifest's scheme and port and its host is the manifest's own
    host or a subdomain of it: the publisher-authority rule of ARD 4.5.1, applied to URLs. An
    IP address has no subdomains. Another host, another port or another scheme: no."""
    scheme, host, port = _host_and_port(manifest_url)
    card_scheme, card_host, card_port = _host_and_port(card_url)
    if not host or not card_host or port is None or (scheme, port) != (card_scheme, card_port):
        return False
    if card_host == host:
        return True
    if _is_ip(host) or _is_ip(card_host):
        return False
    return card_host.endswith("." + host)


def _strings(value: Any, limit: int, length: int = 500) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item[:length] for item in value if isinstance(item, str) and item.strip()][:limit]


def read(raw: bytes, *, manifest_url: str, max_entries: int) -> ManifestReport:
    report = ManifestReport()
    decoded = decode_json(raw, MAX_DEPTH)
    report.findings.extend(decoded.findings)
    if not decoded.ok:
        return report
    doc = decoded.value
    if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
        report.findings.append(
            finding("ard.not-a-manifest", "error", "", "not an ARD manifest: no entries array")
        )
        return report
    for n, error in enumerate(_VALIDATOR.iter_errors(doc)):
        if n >= MAX_SCHEMA_FINDINGS:
            report.findings.append(
                finding("ard.schema", "info", "", "more schema findings were left out")
            )
            break
        pointer = "".join(f"/{part}" for part in error.instance_path)
        report.findings.append(finding("ard.schema", "error", pointer, error.message[:500]))
    report.ok = True
    report.spec_version = str(doc.get("specVersion", ""))[:32]
    report.host = doc["host"] if isinstance(doc.get("host"), dict) else {}
    entries: list[Any] = doc["entries"]
    report.entry_count = len(entries)
    if len(entries) > max_entries:
        report.findings.append(
            finding(
                "ard.too-many-entries",
                "warning",
                "/entries",
                f"the manifest lists {len(entries)} entries; only the first {max_entries} are read",
            )
        )
        entries = entries[:max_entries]
    domain = (urlsplit(manifest_url).hostname or "").lower()
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        _entry(report, index, entry, domain, seen)
    return report


def _entry(report: ManifestReport, index: int, entry: Any, domain: str, seen: set[str]) -> None:
    pointer = f"/entries/{index}"
    if not isinstance(entry, dict):
        return  # the schema finding says it
    raw_kind = entry.get("type")
    kind: str = raw_kind if isinstance(raw_kind, str) else ""
    report.type_counts[kind or "(none)"] = report.type_counts.get(kind or "(none)", 0) + 1
    raw_identifier = entry.get("identifier")
    identifier = raw_identifier if isinstance(raw_identifier, str) else None
    raw_name = entry.get("displayName")
    name: str = raw_name if isinstance(raw_name, str) else ""
    if kind.lower() not in A2A_TYPES:
        report.other_entries.append(
            {
                "identifier": identifier,
                "displayName": name[:512],
                "type": kind[:255],
                "url": entry.get("url") if isinstance(entry.get("url"), str) else None,
            }
        )
        return
    url, data = entry.get("url"), entry.get("data")
    if ("url" in entry) == ("data" in entry) or not (
        isinstance(url, str) or isinstance(data, dict)
    ):
        report.findings.append(
            finding(
                "ard.value-or-reference",
                "error",
                pointer,
                "an entry carries exactly one of url (a string) or data (an object); skipped",
            )
        )
        return
    if identifier is not None:
        identifier = _checked_identifier(report, identifier, entry, domain, pointer, seen)
    queries = entry.get("representativeQueries")
    if not isinstance(queries, list) or not 2 <= len(queries) <= 5:
        report.findings.append(
            finding(
                "ard.representative-queries",
                "warning",
                pointer + "/representativeQueries",
                "an ARD entry should carry 2 to 5 representativeQueries: it is found by them",
            )
        )
    terms = {key: entry[key] for key in _TERMS if key in entry}
    terms["representativeQueries"] = _strings(queries, 10)
    terms["tags"] = _strings(entry.get("tags"), 50, 256)
    terms["displayName"] = name[:512]
    report.agents.append(
        AgentEntry(
            index=index,
            identifier=identifier,
            display_name=name[:512],
            url=url if isinstance(url, str) else None,
            data=data if isinstance(data, dict) else None,
            terms=terms,
            capabilities=_strings(entry.get("capabilities"), 50, 256),
        )
    )


def _checked_identifier(
    report: ManifestReport,
    identifier: str,
    entry: dict[str, Any],
    domain: str,
    pointer: str,
    seen: set[str],
) -> str | None:
    where = pointer + "/identifier"
    try:
        parsed = identifiers.parse(identifier)
    except identifiers.InvalidIdentifier as exc:
        report.findings.append(finding("ard.identifier", "error", where, str(exc)))
        return None
    if not identifiers.has_authority(domain, parsed.publisher):
        report.findings.append(
            finding(
                "ard.publisher-authority",
                "error",
                where,
                f"the identifier names publisher {parsed.publisher!r} but the manifest is served "
                f"by {domain!r}: the identifier is not given (ARD 4.5.1)",
            )
        )
        return None
    trust = entry.get("trustManifest")
    identity = trust.get("identity") if isinstance(trust, dict) else None
    if isinstance(identity, str) and identity:
        trust_domain = identifiers.identity_domain(identity)
        if trust_domain and not identifiers.has_authority(trust_domain, parsed.publisher):
            report.findings.append(
                finding(
                    "ard.trust-identity",
                    "warning",
                    pointer + "/trustManifest/identity",
                    f"trustManifest.identity is in {trust_domain!r}, not in the publisher "
                    f"domain {parsed.publisher!r} (ARD 4.5.1)",
                )
            )
    if identifier in seen:
        report.findings.append(
            finding(
                "ard.duplicate-identifier",
                "error",
                where,
                "another entry of this manifest has this identifier; this one is not given it",
            )
        )
        return None
    seen.add(identifier)
    return identifier

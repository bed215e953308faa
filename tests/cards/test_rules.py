from __future__ import annotations

import copy
import ipaddress
import re
from pathlib import Path
from typing import Any

import pytest

from cards import parsing, rules
from cards.parsing import Shape, detect_shape, normalise_card, parse_card_bytes
from cards.rules import MAX_FINDINGS, RuleContext, engine, validate_card
from registry.findings import Finding

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "validation-rules.md"
requires_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the card corpus is not at {CORPUS} (../shared is absent)"
)

AGENT = "https://agent.example.com/a2a"
OIDC = "https://accounts.example.com/.well-known/openid-configuration"

V1_CARD: dict[str, Any] = {
    "name": "Route Planner",
    "description": "Plans routes",
    "supportedInterfaces": [
        {"url": AGENT, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "agent.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ],
    "provider": {"organization": "Example", "url": "https://example.com"},
    "version": "1.2.0-beta.1+build.5",
    "documentationUrl": "https://docs.example.com",
    "iconUrl": "https://example.com/icon.png",
    "capabilities": {
        "streaming": True,
        "extendedAgentCard": False,
        "extensions": [
            {"uri": "https://example.com/ext/v1", "required": True, "params": {"snake_case": 1}}
        ],
    },
    "securitySchemes": {
        "google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": OIDC}},
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
    },
    "securityRequirements": [{"schemes": {"google": {"list": ["openid"]}, "key": {}}}],
    "defaultInputModes": ["text/plain", "application/json;schema=routeRequest"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "route-optimizer",
            "name": "Optimizer",
            "description": "Optimizes",
            "tags": ["maps"],
            "examples": ['{"from": "a"}'],
            "inputModes": ['Application/JSON; schema="routeRequest"'],
            "outputModes": ["image/*"],
            "securityRequirements": [{"schemes": {"key": {"list": []}}}],
        }
    ],
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln"}],
    "schemas": {"routeRequest": {"type": "object"}},
}

V03_CARD: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Route Planner",
    "description": "Plans routes",
    "url": "https://agent.example.com/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [{"url": "https://agent.example.com/grpc", "transport": "GRPC"}],
    "version": "1.0.0",
    "capabilities": {"streaming": False, "stateTransitionHistory": False},
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "security": [{"bearer": []}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "plan", "name": "Plan", "description": "Plans", "tags": ["maps"]}],
    "supportsAuthenticatedExtendedCard": True,
}

V02_CARD: dict[str, Any] = {
    **{
        key: value
        for key, value in V03_CARD.items()
        if key not in ("preferredTransport", "additionalInterfaces")
    },
    "protocolVersion": "0.2.5",
}


def card(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of base with top-level changes; a value of ... deletes the key."""
    result = copy.deepcopy(base)
    for key, value in changes.items():
        if value is ...:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def check(data: Any, shape: Shape | None = None, **ctx: Any) -> list[Finding]:
    shape = shape or (detect_shape(data) if isinstance(data, dict) else "unknown")
    normalised = normalise_card(data, shape) if isinstance(data, dict) else {}
    return validate_card(data, normalised, shape, RuleContext(**ctx))


def found(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(finding.code, finding.pointer) for finding in findings}


def severity_of(findings: list[Finding], code: str) -> set[str]:
    return {finding.severity for finding in findings if finding.code == code}


# --- clean cards --------------------------------------------------------------------------


@pytest.mark.parametrize("base", [V1_CARD, V03_CARD, V02_CARD], ids=["v1.0", "v0.3", "v0.2"])
def test_a_complete_card_of_each_version_has_no_findings(base: dict[str, Any]) -> None:
    assert check(card(base)) == []


# --- required fields ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    [
        "name",
        "description",
        "supportedInterfaces",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ],
)
def test_each_required_v1_field_is_reported_when_missing(field: str) -> None:
    findings = check(card(V1_CARD, **{field: ...}), shape="v1.0")

    assert ("card.missing-field", f"/{field}") in found(findings)
    assert severity_of(findings, "card.missing-field") == {"error"}


@pytest.mark.parametrize("field", ["url", "protocolVersion", "name", "skills"])
def test_the_v03_required_list_includes_url_and_protocol_version(field: str) -> None:
    findings = check(card(V03_CARD, **{field: ...}), shape="v0.3")

    assert ("card.missing-field", f"/{field}") in found(findings)


@pytest.mark.parametrize("base", [V02_CARD, V03_CARD], ids=["v0.2", "v0.3"])
def test_a_url_layout_card_without_a_protocol_version_is_an_error(base: dict[str, Any]) -> None:
    # a2a.json AgentCard.required has protocolVersion since v0.2.5 and in v0.3.0, the last
    # version of the url layout; a card that declares no version is judged by that one.
    findings = check(card(base, protocolVersion=...))

    assert found(findings) == {("card.missing-field", "/protocolVersion")}
    assert severity_of(findings, "card.missing-field") == {"error"}


def test_a_card_that_declares_1_0_without_supported_interfaces_is_an_error() -> None:
    cases: tuple[tuple[dict[str, Any], Shape], ...] = ((V03_CARD, "v0.3"), (V02_CARD, "v0.2"))
    for base, shape in cases:
        findings = check(card(base, protocolVersion="1.0"), shape=shape)

        assert found(findings) == {("card.missing-field", "/supportedInterfaces")}
        assert severity_of(findings, "card.missing-field") == {"error"}
        assert "declares protocol 1.0" in findings[0].message


def test_a_hybrid_card_declaring_0_3_is_judged_as_0_3_not_as_an_incomplete_v1_card() -> None:
    # Corpus 057: url + protocolVersion 0.3.0 + preferredTransport, and supportedInterfaces
    # entries without protocolVersion (a v1.0 member that v0.3.0 does not have).
    interfaces = [{"url": "https://agent.example.com/rest", "protocolBinding": "HTTP+JSON"}]
    data = card(V03_CARD, supportedInterfaces=interfaces)

    findings = check(data)

    assert detect_shape(data) == "v1.0"
    assert [f for f in findings if f.severity == "error"] == []
    assert ("card.missing-field", "/supportedInterfaces/0/protocolVersion") not in found(findings)
    # Without the declaration the same interfaces are judged as v1.0 ones.
    v1 = check(card(data, protocolVersion=..., url=..., preferredTransport=...))
    assert ("card.missing-field", "/supportedInterfaces/0/protocolVersion") in found(v1)


def test_a_v03_card_without_preferred_transport_gets_a_warning() -> None:
    findings = check(card(V03_CARD, preferredTransport=...))

    assert found(findings) == {("card.missing-preferred-transport", "/preferredTransport")}
    assert severity_of(findings, "card.missing-preferred-transport") == {"warning"}


def test_a_card_without_any_endpoint_is_an_error_and_otherwise_checked_as_v1() -> None:
    findings = check(card(V1_CARD, supportedInterfaces=..., name=...))

    assert found(findings) == {("card.no-endpoint", ""), ("card.missing-field", "/name")}
    assert severity_of(findings, "card.no-endpoint") == {"error"}


@pytest.mark.parametrize("field", ["id", "name", "description", "tags"])
def test_each_required_skill_field_is_reported_with_its_pointer(field: str) -> None:
    skills = copy.deepcopy(V1_CARD["skills"]) * 3
    del skills[2][field]

    findings = check(card(V1_CARD, skills=skills))

    assert ("card.missing-field", f"/skills/2/{field}") in found(findings)


@pytest.mark.parametrize("field", ["url", "protocolBinding", "protocolVersion"])
def test_each_required_interface_field_is_reported(field: str) -> None:
    interfaces = copy.deepcopy(V1_CARD["supportedInterfaces"])
    del interfaces[1][field]

    findings = check(card(V1_CARD, supportedInterfaces=interfaces))

    assert ("card.missing-field", f"/supportedInterfaces/1/{field}") in found(findings)


@pytest.mark.parametrize("field", ["organization", "url"])
def test_a_provider_needs_organization_and_url(field: str) -> None:
    provider = {"organization": "Example", "url": "https://example.com"}
    del provider[field]

    assert found(check(card(V1_CARD, provider=provider))) == {
        ("card.missing-field", f"/provider/{field}")
    }


def test_required_arrays_and_strings_must_not_be_empty() -> None:
    skills = [{**V1_CARD["skills"][0], "tags": [], "id": " "}]

    findings = check(card(V1_CARD, name="", defaultInputModes=[], skills=skills))

    assert found(findings) == {
        ("card.empty-value", "/name"),
        ("card.empty-value", "/defaultInputModes"),
        ("card.empty-value", "/skills/0/tags"),
        ("card.empty-value", "/skills/0/id"),
    }
    assert severity_of(findings, "card.empty-value") == {"error"}


# --- types --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "pointer"),
    [
        ({"name": 12345}, "/name"),
        ({"capabilities": "invalid"}, "/capabilities"),
        ({"capabilities": ["streaming"]}, "/capabilities"),
        ({"defaultInputModes": "text/plain"}, "/defaultInputModes"),
        ({"defaultOutputModes": ["text/plain", 3]}, "/defaultOutputModes/1"),
        ({"skills": [V1_CARD["skills"][0], "echo"]}, "/skills/1"),
        ({"supportedInterfaces": {"url": "https://a.example"}}, "/supportedInterfaces"),
        ({"provider": "Example"}, "/provider"),
        ({"capabilities": {"streaming": "yes"}}, "/capabilities/streaming"),
        ({"capabilities": {"extendedAgentCard": "True"}}, "/capabilities/extendedAgentCard"),
        ({"signatures": [{"protected": 1, "signature": "s"}]}, "/signatures/0/protected"),
        ({"securitySchemes": {"k": "bearer"}}, "/securitySchemes/k"),
        ({"securityRequirements": {"google": []}}, "/securityRequirements"),
        ({"documentationUrl": ["https://a.example"]}, "/documentationUrl"),
    ],
)
def test_known_fields_of_the_wrong_type_are_errors(changes: dict[str, Any], pointer: str) -> None:
    findings = check(card(V1_CARD, **changes))

    assert ("card.wrong-type", pointer) in found(findings)
    assert severity_of(findings, "card.wrong-type") == {"error"}


def test_skill_members_of_the_wrong_type_are_errors() -> None:
    skill = {**V1_CARD["skills"][0], "tags": "maps", "examples": [1], "inputModes": None}

    findings = check(card(V1_CARD, skills=[skill]))

    assert {
        ("card.wrong-type", "/skills/0/tags"),
        ("card.wrong-type", "/skills/0/examples/0"),
        ("card.wrong-type", "/skills/0/inputModes"),
    } <= found(findings)


def test_v03_booleans_written_as_strings_are_wrong_types() -> None:
    findings = check(card(V03_CARD, supportsAuthenticatedExtendedCard="true"))

    assert found(findings) == {("card.wrong-type", "/supportsAuthenticatedExtendedCard")}


WEIRD_VALUES: list[Any] = [
    None,
    True,
    -1,
    2.5,
    "",
    "x",
    [],
    [None, 1, "x", [], {}],
    {},
    {"a": {"b": []}},
]
ALL_KEYS = sorted(set(rules.CARD_FIELDS) | {"schemas", "authentication"})


@pytest.mark.parametrize("key", ALL_KEYS)
@pytest.mark.parametrize("value", WEIRD_VALUES, ids=repr)
def test_validation_never_raises_whatever_type_a_field_has(key: str, value: Any) -> None:
    for base in (V1_CARD, V03_CARD):
        findings = check(card(base, **{key: value}))
        assert "rules.internal-error" not in {f.code for f in findings}


@pytest.mark.parametrize("value", WEIRD_VALUES, ids=repr)
def test_validation_never_raises_on_wrong_types_inside_nested_objects(value: Any) -> None:
    nested = card(
        V1_CARD,
        supportedInterfaces=[
            value,
            {"url": value, "protocolBinding": value, "protocolVersion": value},
        ],
        provider={"organization": value, "url": value},
        capabilities={"extensions": [value, {"uri": value, "required": value, "params": value}]},
        securitySchemes={
            "a": value,
            "b": {"type": value},
            "c": {"apiKeySecurityScheme": value},
            "d": {"oauth2SecurityScheme": {"flows": {"x": value, "y": {"tokenUrl": value}}}},
        },
        securityRequirements=[value, {"schemes": value}, {"schemes": {"a": value}}, {"a": value}],
        skills=[value, {"id": value, "tags": value, "inputModes": value, "security": [value]}],
        signatures=[value, {"protected": value, "header": value}],
        additionalInterfaces=[value, {"url": value, "transport": value}],
        url=value,
        preferredTransport=value,
    )

    for shape in ("v0.2", "v0.3", "v1.0", "unknown"):
        findings = check(nested, shape=shape)  # type: ignore[arg-type]
        assert "rules.internal-error" not in {f.code for f in findings}


@pytest.mark.parametrize("data", [None, [], "card", 3])
def test_a_card_that_is_not_an_object_is_one_wrong_type_finding(data: Any) -> None:
    assert found(check(data)) == {("card.wrong-type", "")}


def test_a_rule_that_breaks_is_reported_and_the_other_rules_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(run: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(engine, "RULES", (broken, *engine.RULES))

    findings = check(card(V1_CARD, version="latest"))

    assert found(findings) == {
        ("rules.internal-error", ""),
        ("card.version-not-semver", "/version"),
    }


def test_findings_are_capped_so_a_hostile_card_cannot_flood_storage() -> None:
    skills = [{"id": "Same_Id"} for _ in range(MAX_FINDINGS)]

    findings = check(card(V1_CARD, skills=skills))

    assert len(findings) == MAX_FINDINGS + 1
    assert findings[-1].code == "card.too-many-findings"
    assert findings[-1].severity == "info"


# --- skills -------------------------------------------------------------------------------


def test_duplicate_skill_ids_are_errors_on_the_later_skill() -> None:
    skill = V1_CARD["skills"][0]
    other = {**skill, "id": "other"}

    findings = check(card(V1_CARD, skills=[skill, other, skill]))

    assert found(findings) == {("skill.duplicate-id", "/skills/2/id")}
    assert severity_of(findings, "skill.duplicate-id") == {"error"}
    assert "/skills/0" in findings[0].message


@pytest.mark.parametrize(
    "skill_id", ["CodeReview", "code_review", "code--review", "-a", "a-", "café"]
)
def test_skill_ids_that_are_not_kebab_case_are_only_info(skill_id: str) -> None:
    skill = {**V1_CARD["skills"][0], "id": skill_id}

    findings = check(card(V1_CARD, skills=[skill]))

    assert found(findings) == {("skill.id-not-kebab-case", "/skills/0/id")}
    assert severity_of(findings, "skill.id-not-kebab-case") == {"info"}


@pytest.mark.parametrize("skill_id", ["code-review", "a", "v2-route-9"])
def test_kebab_case_skill_ids_pass(skill_id: str) -> None:
    skill = {**V1_CARD["skills"][0], "id": skill_id}

    assert check(card(V1_CARD, skills=[skill])) == []


# --- URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "not-a-url",
        "/relative/path",
        "https://",
        "{BASE_URL}/a2a",
        "https://exa mple.com",
        "https://[::1",
        "https://a.example:99999/",
        "",
    ],
)
def test_urls_that_are_not_absolute_are_errors(url: str) -> None:
    findings = check(card(V1_CARD, documentationUrl=url))

    assert found(findings) == {("url.invalid", "/documentationUrl")}
    assert severity_of(findings, "url.invalid") == {"error"}


def test_every_kind_of_url_is_checked() -> None:
    data = card(
        V03_CARD,
        url="nope",
        additionalInterfaces=[{"url": "nope", "transport": "GRPC"}],
        provider={"organization": "o", "url": "nope"},
        documentationUrl="nope",
        iconUrl="nope",
        securitySchemes={
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "nope"},
            "oauth": {
                "type": "oauth2",
                "oauth2MetadataUrl": "nope",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "nope",
                        "tokenUrl": "nope",
                        "refreshUrl": "nope",
                        "scopes": {},
                    }
                },
            },
        },
        security=[],
    )

    assert {pointer for code, pointer in found(check(data)) if code == "url.invalid"} == {
        "/url",
        "/additionalInterfaces/0/url",
        "/provider/url",
        "/documentationUrl",
        "/iconUrl",
        "/securitySchemes/oidc/openIdConnectUrl",
        "/securitySchemes/oauth/oauth2MetadataUrl",
        "/securitySchemes/oauth/flows/authorizationCode/authorizationUrl",
        "/securitySchemes/oauth/flows/authorizationCode/tokenUrl",
        "/securitySchemes/oauth/flows/authorizationCode/refreshUrl",
    }


def test_v1_interface_urls_and_scheme_urls_are_checked_too() -> None:
    interfaces = [{"url": "nope", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]
    device = {"deviceAuthorizationUrl": "nope", "tokenUrl": "https://t.example", "scopes": {}}
    schemes = {
        "g": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "nope"}},
        "d": {"oauth2SecurityScheme": {"flows": {"deviceCode": device}}},
    }
    skill = {**V1_CARD["skills"][0], "securityRequirements": []}
    data = card(
        V1_CARD,
        supportedInterfaces=interfaces,
        securitySchemes=schemes,
        securityRequirements=...,
        skills=[skill],
    )

    assert found(check(data)) == {
        ("url.invalid", "/supportedInterfaces/0/url"),
        ("url.invalid", "/securitySchemes/g/openIdConnectSecurityScheme/openIdConnectUrl"),
        (
            "url.invalid",
            "/securitySchemes/d/oauth2SecurityScheme/flows/deviceCode/deviceAuthorizationUrl",
        ),
    }


def test_plain_http_is_a_warning_unless_http_is_allowed() -> None:
    data = card(V1_CARD, documentationUrl="http://docs.example.com")

    assert found(check(data)) == {("url.insecure-http", "/documentationUrl")}
    assert severity_of(check(data), "url.insecure-http") == {"warning"}
    assert check(data, allow_http=True) == []


@pytest.mark.parametrize(
    "url", ["ftp://files.example.com/card", "file:///etc/passwd", "javascript:alert(1)"]
)
def test_web_urls_must_be_http_or_https(url: str) -> None:
    findings = check(card(V1_CARD, iconUrl=url))

    assert {code for code, _ in found(findings)} <= {"url.unsupported-scheme", "url.invalid"}
    assert findings and all(f.severity == "error" for f in findings)


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/a2a",
        "http://127.0.0.1:8080/",
        "https://10.1.2.3/",
        "https://192.168.0.10/",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/",
        "https://[fe80::1]/",
        "https://agent.localhost/",
    ],
)
def test_private_loopback_and_link_local_hosts_are_warnings_not_errors(url: str) -> None:
    interfaces = [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]

    findings = check(card(V1_CARD, supportedInterfaces=interfaces), allow_http=True)

    assert found(findings) == {("url.private-address", "/supportedInterfaces/0/url")}
    # No rule of the spec forbids them; fetching them is the fetch policy's business.
    assert severity_of(findings, "url.private-address") == {"warning"}


def test_allowed_networks_exempt_addresses_from_the_private_address_rule() -> None:
    url = "http://127.0.0.1:8000/a2a"
    interfaces = [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    data = card(V1_CARD, supportedInterfaces=interfaces)
    loopback = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    other = (ipaddress.ip_network("10.0.0.0/8"),)

    assert check(data, allow_http=True, allowed_networks=loopback) == []
    assert found(check(data, allow_http=True, allowed_networks=other)) == {
        ("url.private-address", "/supportedInterfaces/0/url")
    }


@pytest.mark.parametrize(
    "url", ["grpc.example.com:443", "[2606:4700::1111]:50051", "https://grpc.example.com/a2a"]
)
def test_grpc_interfaces_may_give_host_and_port_without_a_scheme(url: str) -> None:
    interfaces = [{"url": url, "protocolBinding": "GRPC", "protocolVersion": "1.0"}]

    assert check(card(V1_CARD, supportedInterfaces=interfaces)) == []


def test_host_and_port_without_a_scheme_is_invalid_for_http_bindings() -> None:
    url = "agent.example.com:443"
    interfaces = [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]

    assert found(check(card(V1_CARD, supportedInterfaces=interfaces))) == {
        ("url.invalid", "/supportedInterfaces/0/url")
    }


def test_a_grpc_host_and_port_on_a_private_address_is_still_refused() -> None:
    interfaces = [{"url": "10.0.0.5:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]

    assert found(check(card(V1_CARD, supportedInterfaces=interfaces))) == {
        ("url.private-address", "/supportedInterfaces/0/url")
    }


def test_an_international_host_name_is_checked_in_its_ascii_form() -> None:
    assert check(card(V1_CARD, iconUrl="https://bücher.example/icon.png")) == []


# --- versions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version", ["1.0", "v1.0.0", "latest", "1.0.0.0", "01.2.3", "81c74b7c-d9be"]
)
def test_an_agent_version_that_is_not_semver_is_a_warning(version: str) -> None:
    findings = check(card(V1_CARD, version=version))

    assert found(findings) == {("card.version-not-semver", "/version")}
    assert severity_of(findings, "card.version-not-semver") == {"warning"}


@pytest.mark.parametrize("version", ["0.0.1", "10.20.30", "1.0.0-alpha.1", "1.0.0+20130313144700"])
def test_semver_agent_versions_pass(version: str) -> None:
    assert check(card(V1_CARD, version=version)) == []


def test_protocol_versions_that_do_not_look_like_versions_are_warnings() -> None:
    interfaces = [{**V1_CARD["supportedInterfaces"][0], "protocolVersion": "latest"}]

    v1 = check(card(V1_CARD, supportedInterfaces=interfaces))
    v03 = check(card(V03_CARD, protocolVersion="not-semver"), shape="v0.3")

    assert found(v1) == {("card.protocol-version-format", "/supportedInterfaces/0/protocolVersion")}
    assert found(v03) == {("card.protocol-version-format", "/protocolVersion")}
    assert severity_of(v1, "card.protocol-version-format") == {"warning"}


def test_a_declared_protocol_version_that_disagrees_with_the_layout_is_info() -> None:
    findings = check(card(V03_CARD, protocolVersion="0.2.9"), shape="v0.3")

    assert found(findings) == {("card.layout-version-mismatch", "/protocolVersion")}
    assert severity_of(findings, "card.layout-version-mismatch") == {"info"}


# --- modes --------------------------------------------------------------------------------


def test_invalid_media_types_in_any_mode_list_are_warnings() -> None:
    skill = {**V1_CARD["skills"][0], "inputModes": ["text/plain", "telepathy"]}
    skill["outputModes"] = ["json"]
    data = card(V1_CARD, defaultInputModes=["text/"], defaultOutputModes=["a/b;c"], skills=[skill])

    findings = check(data)

    assert found(findings) == {
        ("mode.invalid", "/defaultInputModes/0"),
        ("mode.invalid", "/defaultOutputModes/0"),
        ("mode.legacy-word", "/skills/0/inputModes/1"),
        ("mode.legacy-word", "/skills/0/outputModes/0"),
    }
    assert severity_of(findings, "mode.invalid") == {"warning"}
    assert severity_of(findings, "mode.legacy-word") == {"warning"}


@pytest.mark.parametrize("word", ["text", "file", "data", "json", "JSON"])
def test_bare_mode_words_are_one_warning_whatever_the_word(word: str) -> None:
    findings = check(card(V1_CARD, defaultInputModes=[word]))

    assert found(findings) == {("mode.legacy-word", "/defaultInputModes/0")}
    assert severity_of(findings, "mode.legacy-word") == {"warning"}


# --- bindings -----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", ["jsonrpc", "REST", "websocket", "INVALID_TRANSPORT"])
def test_unknown_bindings_are_warnings(binding: str) -> None:
    interfaces = [{**V1_CARD["supportedInterfaces"][0], "protocolBinding": binding}]

    findings = check(card(V1_CARD, supportedInterfaces=interfaces))

    assert found(findings) == {
        ("interface.unknown-binding", "/supportedInterfaces/0/protocolBinding")
    }
    assert severity_of(findings, "interface.unknown-binding") == {"warning"}


def test_lowercase_known_bindings_get_a_suggestion() -> None:
    interfaces = [{**V1_CARD["supportedInterfaces"][0], "protocolBinding": "jsonrpc"}]

    [finding] = check(card(V1_CARD, supportedInterfaces=interfaces))

    assert "did you mean 'JSONRPC'" in finding.message


def test_uri_bindings_are_custom_bindings_reported_as_info() -> None:
    binding = "https://example.com/bindings/ws"
    url = "wss://agent.example.com/ws"
    interfaces = [{"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}]

    findings = check(card(V1_CARD, supportedInterfaces=interfaces))

    assert found(findings) == {
        ("interface.custom-binding", "/supportedInterfaces/0/protocolBinding")
    }
    assert severity_of(findings, "interface.custom-binding") == {"info"}


def test_v03_transport_fields_are_checked_as_bindings() -> None:
    websocket = {"url": "wss://agent.example.com/ws", "transport": "websocket"}

    findings = check(card(V03_CARD, preferredTransport="REST", additionalInterfaces=[websocket]))

    assert found(findings) == {
        ("interface.unknown-binding", "/preferredTransport"),
        ("interface.unknown-binding", "/additionalInterfaces/0/transport"),
    }


# --- extensions ---------------------------------------------------------------------------


EXTENSION = "/capabilities/extensions/0"


@pytest.mark.parametrize(
    ("extension", "expected"),
    [
        ("https://example.com/ext", ("card.wrong-type", "/capabilities/extensions/0")),
        ({"description": "no uri"}, ("card.missing-field", "/capabilities/extensions/0/uri")),
        ({"uri": 7}, ("card.wrong-type", "/capabilities/extensions/0/uri")),
        ({"uri": ""}, ("card.empty-value", "/capabilities/extensions/0/uri")),
        ({"uri": "urn:x", "required": "true"}, ("card.wrong-type", f"{EXTENSION}/required")),
        ({"uri": "urn:x", "params": ["a"]}, ("card.wrong-type", f"{EXTENSION}/params")),
        ({"uri": "urn:x", "description": 1}, ("card.wrong-type", f"{EXTENSION}/description")),
    ],
)
def test_malformed_extensions_are_errors(extension: Any, expected: tuple[str, str]) -> None:
    findings = check(card(V1_CARD, capabilities={"extensions": [extension]}))

    assert found(findings) == {expected}
    assert all(f.severity == "error" for f in findings)


def test_an_extension_declared_twice_is_a_warning() -> None:
    extensions = [{"uri": "urn:x"}, {"uri": "urn:y"}, {"uri": "urn:x", "required": True}]

    findings = check(card(V1_CARD, capabilities={"extensions": extensions}))

    assert found(findings) == {("extension.duplicate-uri", "/capabilities/extensions/2/uri")}
    assert severity_of(findings, "extension.duplicate-uri") == {"warning"}


# --- security -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "pointer"),
    [
        ({"type": "basic"}, "/securitySchemes/s/type"),
        ({"bearer": {}}, "/securitySchemes/s"),
        (
            {"httpAuthSecurityScheme": {"scheme": "Bearer"}, "mtlsSecurityScheme": {}},
            "/securitySchemes/s",
        ),
    ],
)
def test_unknown_security_scheme_types_are_errors(scheme: dict[str, Any], pointer: str) -> None:
    findings = check(card(V1_CARD, securitySchemes={**V1_CARD["securitySchemes"], "s": scheme}))

    errors = [f for f in findings if f.severity == "error"]
    assert found(errors) == {("security.unknown-scheme-type", pointer)}


@pytest.mark.parametrize(
    ("scheme", "missing"),
    [
        ({"type": "apiKey", "name": "X-Key"}, "/securitySchemes/s/in"),
        ({"type": "http"}, "/securitySchemes/s/scheme"),
        ({"type": "oauth2"}, "/securitySchemes/s/flows"),
        ({"type": "openIdConnect"}, "/securitySchemes/s/openIdConnectUrl"),
        (
            {"apiKeySecurityScheme": {"location": "header"}},
            "/securitySchemes/s/apiKeySecurityScheme/name",
        ),
        ({"httpAuthSecurityScheme": {}}, "/securitySchemes/s/httpAuthSecurityScheme/scheme"),
    ],
)
def test_security_schemes_need_their_required_members(scheme: dict[str, Any], missing: str) -> None:
    findings = check(card(V03_CARD, securitySchemes={**V03_CARD["securitySchemes"], "s": scheme}))

    assert found(findings) == {("card.missing-field", missing)}


def test_an_api_key_location_outside_query_header_cookie_is_an_invalid_value() -> None:
    key = {"apiKeySecurityScheme": {"location": "body", "name": "k"}}

    findings = check(card(V1_CARD, securitySchemes={**V1_CARD["securitySchemes"], "key": key}))

    assert found(findings) == {
        ("card.invalid-value", "/securitySchemes/key/apiKeySecurityScheme/location")
    }
    assert severity_of(findings, "card.invalid-value") == {"error"}


def test_requirements_naming_undeclared_schemes_are_errors_in_either_form() -> None:
    requirement = {"schemes": {"google": {}, "nope": {"list": []}}}
    v1 = check(card(V1_CARD, securityRequirements=[requirement]))
    v03 = check(card(V03_CARD, security=[{"bearer": [], "nope": []}]))
    skill = {**V03_CARD["skills"][0], "security": [{"ghost": []}]}
    in_skill = check(card(V03_CARD, skills=[skill]))

    assert found(v1) == {("security.undeclared-scheme", "/securityRequirements/0/schemes/nope")}
    assert found(v03) == {("security.undeclared-scheme", "/security/0/nope")}
    assert found(in_skill) == {("security.undeclared-scheme", "/skills/0/security/0/ghost")}
    assert severity_of(v1, "security.undeclared-scheme") == {"error"}


def test_v03_requirement_lists_inside_security_requirements_are_wrong_types() -> None:
    findings = check(card(V1_CARD, securityRequirements=[{"google": []}]))

    assert found(findings) == {("card.wrong-type", "/securityRequirements/0")}


def test_scope_lists_must_hold_strings() -> None:
    v1 = check(card(V1_CARD, securityRequirements=[{"schemes": {"google": {"list": "openid"}}}]))
    v03 = check(card(V03_CARD, security=[{"bearer": "read"}]))

    assert found(v1) == {("card.wrong-type", "/securityRequirements/0/schemes/google/list")}
    assert found(v03) == {("card.wrong-type", "/security/0/bearer")}


def test_signatures_need_protected_and_signature() -> None:
    findings = check(card(V1_CARD, signatures=[{"header": {"kid": "k"}}]))

    assert found(findings) == {
        ("card.missing-field", "/signatures/0/protected"),
        ("card.missing-field", "/signatures/0/signature"),
    }


# --- v0.x members in v1.0 cards, snake_case, templates ------------------------------------


def test_v0_members_in_a_v1_card_are_deprecated_field_warnings() -> None:
    interfaces = [{**V1_CARD["supportedInterfaces"][0], "transport": "JSONRPC"}]
    skill = {**V1_CARD["skills"][0], "security": [{"key": []}]}
    data = card(
        V1_CARD,
        url="https://agent.example.com/a2a",
        protocolVersion="1.0",
        supportsAuthenticatedExtendedCard=True,
        security=[{"google": ["openid"]}],
        capabilities={"stateTransitionHistory": False},
        supportedInterfaces=interfaces,
        skills=[skill],
        securitySchemes={**V1_CARD["securitySchemes"], "h": {"type": "http", "scheme": "bearer"}},
    )

    findings = check(data)

    assert found(findings) == {
        ("card.deprecated-field", "/url"),
        ("card.deprecated-field", "/protocolVersion"),
        ("card.deprecated-field", "/supportsAuthenticatedExtendedCard"),
        ("card.deprecated-field", "/security"),
        ("card.deprecated-field", "/capabilities/stateTransitionHistory"),
        ("card.deprecated-field", "/supportedInterfaces/0/transport"),
        ("card.deprecated-field", "/skills/0/security"),
        ("card.deprecated-field", "/securitySchemes/h/type"),
    }
    assert severity_of(findings, "card.deprecated-field") == {"warning"}


def test_the_v01_authentication_object_is_deprecated_in_v0x_cards() -> None:
    findings = check(card(V02_CARD, authentication={"schemes": ["bearer"]}))

    assert found(findings) == {("card.deprecated-field", "/authentication")}


def test_snake_case_spellings_of_known_members_are_warnings_naming_the_camel_case_key() -> None:
    schemes = {
        **V1_CARD["securitySchemes"],
        "h": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearer_format": "JWT"}},
    }
    skill = {**V1_CARD["skills"][0], "input_modes": ["text/plain"]}
    extension = {"uri": "urn:x", "params": {"max_rounds": 3}}  # params may be snake_case
    data = card(
        V1_CARD,
        default_input_modes=["text/plain"],
        securitySchemes=schemes,
        skills=[skill],
        capabilities={"push_notifications": True, "extensions": [extension]},
    )

    findings = check(data)

    assert found(findings) == {
        ("card.snake-case-key", "/default_input_modes"),
        ("card.snake-case-key", "/capabilities/push_notifications"),
        ("card.snake-case-key", "/skills/0/input_modes"),
        ("card.snake-case-key", "/securitySchemes/h/httpAuthSecurityScheme/bearer_format"),
    }
    assert severity_of(findings, "card.snake-case-key") == {"warning"}
    assert any("'defaultInputModes'" in f.message for f in findings)


@pytest.mark.parametrize(
    "text", ["{{ protocol_version }}", "Agent ${AGENT_NAME}", "{% if x %}y{% endif %}"]
)
def test_unrendered_templates_in_strings_are_warnings(text: str) -> None:
    skill = {**V1_CARD["skills"][0], "examples": ["fine", text]}

    findings = check(card(V1_CARD, skills=[skill]))

    assert found(findings) == {("card.unrendered-template", "/skills/0/examples/1")}
    assert severity_of(findings, "card.unrendered-template") == {"warning"}


def test_json_examples_with_braces_are_not_templates() -> None:
    skill = {**V1_CARD["skills"][0], "examples": ['{"a": {"b": 1}}', "{name}"]}

    assert check(card(V1_CARD, skills=[skill])) == []


def test_pointers_escape_slashes_and_tildes_in_member_names() -> None:
    schemes = {**V1_CARD["securitySchemes"], "a/b~c": {"type": "nope"}}

    findings = check(card(V1_CARD, securitySchemes=schemes))

    assert ("security.unknown-scheme-type", "/securitySchemes/a~1b~0c/type") in found(findings)


# --- the documentation lists every code ---------------------------------------------------


def test_every_code_the_code_can_emit_is_documented() -> None:
    packages = [Path(rules.__file__).parent, Path(parsing.__file__).parent]
    sources = sorted(source for package in packages for source in package.glob("*.py"))
    emitted = set()
    for source in sources:
        emitted |= set(
            re.findall(
                r'"((?:json|envelope|parse|card|skill|url|mode|interface|'
                r'extension|security|rules)\.[a-z-]+)"',
                source.read_text(),
            )
        )
    documented = set(re.findall(r"`([a-z]+\.[a-z-]+)`", DOCS.read_text()))

    assert emitted - documented == set()
    assert len(emitted) > 30


# --- the corpus ---------------------------------------------------------------------------


def parse_and_validate(path: Path) -> tuple[str, list[Finding]]:
    doc = parse_card_bytes(path.read_bytes())
    findings = list(doc.findings)
    if doc.data is not None:
        assert doc.card is not None
        findings += validate_card(doc.data, doc.card, doc.shape, RuleContext())
    return doc.shape, findings


@pytest.mark.needs_shared
@requires_corpus
def test_every_corpus_card_parses_and_validates_without_an_exception() -> None:
    paths = sorted((CORPUS / "cards").glob("*.json"))
    assert len(paths) == 77

    for path in paths:
        _, findings = parse_and_validate(path)
        codes = {f.code for f in findings}
        assert not codes & {"parse.internal-error", "rules.internal-error"}, path.name


@pytest.mark.needs_shared
@requires_corpus
@pytest.mark.parametrize(
    ("prefix", "code"), [("001", "json.invalid"), ("006", "json.invalid"), ("056", "json.empty")]
)
def test_the_three_corpus_files_that_are_not_json_say_so(prefix: str, code: str) -> None:
    [path] = (CORPUS / "cards").glob(f"{prefix}-*.json")

    _, findings = parse_and_validate(path)

    assert [(f.code, f.severity) for f in findings] == [(code, "error")]


@pytest.mark.needs_shared
@requires_corpus
@pytest.mark.parametrize("prefix", ["002", "003", "004", "005"])
def test_the_spec_sample_cards_have_no_errors(prefix: str) -> None:
    [path] = (CORPUS / "cards").glob(f"{prefix}-*.json")

    shape, findings = parse_and_validate(path)

    assert [f for f in findings if f.severity == "error"] == []
    # What remains is expected: the v1.0.0 sample (004) still uses the v0.3 names `security`
    # and `stateTransitionHistory`; the v0.3.0 sample (003) declares protocolVersion 0.2.9.
    expected = {
        "002": set(),
        "003": {("card.layout-version-mismatch", "/protocolVersion")},
        "004": {
            ("card.deprecated-field", "/security"),
            ("card.deprecated-field", "/capabilities/stateTransitionHistory"),
        },
        "005": set(),
    }
    assert found(findings) == expected[prefix]


@pytest.mark.needs_shared
@requires_corpus
@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (
            "017",
            {
                ("card.wrong-type", "/name"),
                ("card.empty-value", "/description"),
                ("card.wrong-type", "/capabilities"),
                ("card.missing-field", "/skills/0/id"),
            },
        ),
        (
            "020",
            {
                ("url.private-address", "/url"),
                ("card.wrong-type", "/capabilities/streaming"),
                ("mode.legacy-word", "/defaultInputModes/0"),
            },
        ),
        (
            "037",
            {
                ("url.invalid", "/url"),
                ("interface.unknown-binding", "/preferredTransport"),
                ("card.version-not-semver", "/version"),
            },
        ),
        ("040", {("mode.legacy-word", "/defaultInputModes/0"), ("card.empty-value", "/skills")}),
        ("041", {("card.unrendered-template", "/protocolVersion")}),
        ("068", {("url.invalid", "/supportedInterfaces/0/url")}),
        ("074", {("card.snake-case-key", "/default_input_modes")}),
    ],
)
def test_known_broken_corpus_cards_get_the_findings_their_notes_describe(
    prefix: str, expected: set[tuple[str, str]]
) -> None:
    [path] = (CORPUS / "cards").glob(f"{prefix}-*.json")

    _, findings = parse_and_validate(path)

    assert expected <= found(findings)


@pytest.mark.needs_shared
@requires_corpus
@pytest.mark.parametrize(
    ("prefix", "valid"),
    [
        # url-layout cards without protocolVersion (REQUIRED since v0.2.5)
        ("008", False),
        ("025", False),
        ("026", False),
        # the url layout declaring 1.0: supportedInterfaces is REQUIRED by 1.0
        ("050", False),
        ("058", False),
        # a complete 0.3.0 card that also carries supportedInterfaces: judged as 0.3.0
        ("057", True),
        # private hosts are warnings; `text` and `json` modes are warnings alike
        ("023", True),
        ("024", True),
        ("061", True),
        ("062", True),
        ("064", True),
    ],
)
def test_corpus_verdicts_follow_the_version_each_card_declares(prefix: str, valid: bool) -> None:
    # The verdicts the A2A TCK gives these cards (bench/tck_compare.py, version-matched).
    [path] = (CORPUS / "cards").glob(f"{prefix}-*.json")

    _, findings = parse_and_validate(path)

    errors = [f for f in findings if f.severity == "error"]
    assert (not errors) is valid, errors

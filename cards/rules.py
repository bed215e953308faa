"""Card rules: a served card (and its v1.0 normal form) -> findings.

Rules read `data`, the JSON as served, so every pointer points into what the agent published.
Each rule is a small function; a rule that trips over an input it did not expect becomes one
`rules.internal-error` finding instead of an exception, because validation must always answer.
The codes are stable and listed in docs/validation-rules.md.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cards.findings import Finding, Severity, extend_pointer, json_pointer
from cards.mediatypes import MediaTypeError, is_legacy_mode_word, parse_media_type
from cards.parsing import Shape
from registry.http.addresses import host_refusal

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Enough to show everything wrong with a real card; bounded so a hostile one cannot make
# us store millions of rows.
MAX_FINDINGS = 1000


@dataclass(frozen=True)
class RuleContext:
    allow_http: bool = False
    # Exempt from url.private-address (development and tests), like the fetcher's setting.
    allowed_networks: tuple[Network, ...] = ()


class _Report:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.dropped = 0

    def add(self, code: str, severity: Severity, pointer: str, message: str) -> None:
        if len(self.findings) >= MAX_FINDINGS:
            self.dropped += 1
            return
        self.findings.append(Finding(code, severity, pointer, message))

    def error(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "error", pointer, message)

    def warning(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "warning", pointer, message)

    def info(self, code: str, pointer: str, message: str) -> None:
        self.add(code, "info", pointer, message)


# --- field tables --------------------------------------------------------------------------

STRING, BOOLEAN, OBJECT = "a string", "a boolean", "an object"
STRINGS, OBJECTS = "an array of strings", "an array of objects"

CARD_FIELDS = {
    "name": STRING,
    "description": STRING,
    "supportedInterfaces": OBJECTS,
    "provider": OBJECT,
    "version": STRING,
    "documentationUrl": STRING,
    "capabilities": OBJECT,
    "securitySchemes": OBJECT,
    "securityRequirements": OBJECTS,
    "defaultInputModes": STRINGS,
    "defaultOutputModes": STRINGS,
    "skills": OBJECTS,
    "signatures": OBJECTS,
    "iconUrl": STRING,
    # v0.x members
    "url": STRING,
    "preferredTransport": STRING,
    "additionalInterfaces": OBJECTS,
    "protocolVersion": STRING,
    "supportsAuthenticatedExtendedCard": BOOLEAN,
    "supportsExtendedAgentCard": BOOLEAN,
    "security": OBJECTS,
    "authentication": OBJECT,
}
INTERFACE_FIELDS = {
    "url": STRING,
    "protocolBinding": STRING,
    "protocolVersion": STRING,
    "tenant": STRING,
    "transport": STRING,
}
PROVIDER_FIELDS = {"organization": STRING, "url": STRING}
CAPABILITY_FIELDS = {
    "streaming": BOOLEAN,
    "pushNotifications": BOOLEAN,
    "stateTransitionHistory": BOOLEAN,
    "extendedAgentCard": BOOLEAN,
    "extensions": OBJECTS,
}
EXTENSION_FIELDS = {"uri": STRING, "description": STRING, "required": BOOLEAN, "params": OBJECT}
SKILL_FIELDS = {
    "id": STRING,
    "name": STRING,
    "description": STRING,
    "tags": STRINGS,
    "examples": STRINGS,
    "inputModes": STRINGS,
    "outputModes": STRINGS,
    "securityRequirements": OBJECTS,
    "security": OBJECTS,
}
SIGNATURE_FIELDS = {"protected": STRING, "signature": STRING, "header": OBJECT}
SCHEME_FIELDS = {
    "type": STRING,
    "description": STRING,
    "in": STRING,
    "location": STRING,
    "name": STRING,
    "scheme": STRING,
    "bearerFormat": STRING,
    "flows": OBJECT,
    "openIdConnectUrl": STRING,
    "oauth2MetadataUrl": STRING,
}

_V1_REQUIRED = (
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
_V02_REQUIRED = (
    "name",
    "description",
    "url",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
REQUIRED_BY_SHAPE: dict[str, tuple[str, ...]] = {
    "v1.0": _V1_REQUIRED,
    "v0.3": (*_V02_REQUIRED, "protocolVersion"),  # a2a.json v0.3.0 AgentCard.required
    "v0.2": _V02_REQUIRED,
    # No endpoint is reported once as card.no-endpoint; the rest is checked as v1.0.
    "unknown": tuple(name for name in _V1_REQUIRED if name != "supportedInterfaces"),
}
SKILL_REQUIRED = ("id", "name", "description", "tags")
# Spec v1.0 section 5.7: required arrays must have at least one element.
NON_EMPTY_ARRAYS = frozenset(
    {"supportedInterfaces", "defaultInputModes", "defaultOutputModes", "skills", "tags"}
)
# Required strings that must not be blank. URLs are left to the url.* rules.
NON_EMPTY_STRINGS = frozenset(
    {"name", "description", "version", "id", "organization", "protocolBinding", "protocolVersion"}
)

KNOWN_BINDINGS = ("JSONRPC", "GRPC", "HTTP+JSON")
_BINDING_HINTS = {"REST": "HTTP+JSON", "HTTP": "HTTP+JSON", "JSON-RPC": "JSONRPC"}
_SCHEME_TYPES = {
    "apiKey": ("in", "name"),
    "http": ("scheme",),
    "oauth2": ("flows",),
    "openIdConnect": ("openIdConnectUrl",),
    "mutualTLS": (),
}
_SCHEME_WRAPPERS = {
    "apiKeySecurityScheme": ("location", "name"),
    "httpAuthSecurityScheme": ("scheme",),
    "oauth2SecurityScheme": ("flows",),
    "openIdConnectSecurityScheme": ("openIdConnectUrl",),
    "mtlsSecurityScheme": (),
}
_API_KEY_LOCATIONS = ("query", "header", "cookie")
_FLOW_URL_FIELDS = ("authorizationUrl", "tokenUrl", "refreshUrl", "deviceAuthorizationUrl")

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
PROTOCOL_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?$")
KEBAB_CASE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
_GRPC_HOST_PORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.%]+\]|[^\s:/?#\[\]@]+):(?P<port>\d{1,5})$")
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\$\{[^}]*\}|\{%.*?%\}", re.DOTALL)
_INSECURE_SCHEMES = frozenset({"http", "ws"})


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _items(value: Any) -> Iterator[tuple[int, Any]]:
    """Enumerate a list; anything else (already reported as a wrong type) yields nothing."""
    return enumerate(value) if isinstance(value, list) else iter(())


def _dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in _items(value) if isinstance(item, dict))


# --- generic object checks ----------------------------------------------------------------


def _check_type(report: _Report, value: Any, expected: str, pointer: str) -> bool:
    """Report a wrong type (and wrong array elements); True when the container type is right."""
    if expected == STRING:
        ok = isinstance(value, str)
    elif expected == BOOLEAN:
        ok = isinstance(value, bool)
    elif expected == OBJECT:
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, list)
    if not ok:
        report.error("card.wrong-type", pointer, f"must be {expected}, not {_kind(value)}")
        return False
    element = STRING if expected == STRINGS else OBJECT if expected == OBJECTS else None
    if element is not None:
        for index, item in enumerate(value):
            if not _check_type_quiet(item, element):
                report.error(
                    "card.wrong-type",
                    extend_pointer(pointer, index),
                    f"must be {element}, not {_kind(item)}",
                )
    return True


def _check_type_quiet(value: Any, expected: str) -> bool:
    return isinstance(value, str) if expected == STRING else isinstance(value, dict)


def _check_object(
    report: _Report,
    obj: dict[str, Any],
    pointer: str,
    fields: dict[str, str],
    required: tuple[str, ...] = (),
) -> None:
    """Presence, type and non-emptiness of the known members of one object."""
    for name in required:
        if name not in obj:
            where = extend_pointer(pointer, name)
            report.error("card.missing-field", where, f"{name!r} is required")
    for name, expected in fields.items():
        if name not in obj:
            continue
        value, where = obj[name], extend_pointer(pointer, name)
        if not _check_type(report, value, expected, where) or name not in required:
            continue
        if name in NON_EMPTY_ARRAYS and isinstance(value, list) and not value:
            report.error("card.empty-value", where, f"{name!r} must have at least one element")
        elif name in NON_EMPTY_STRINGS and isinstance(value, str) and not value.strip():
            report.error("card.empty-value", where, f"{name!r} must not be empty")


# --- URLs ----------------------------------------------------------------------------------


def _ascii_host(host: str) -> str | None:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _check_host(report: _Report, ctx: RuleContext, host: str, pointer: str) -> None:
    refusal = host_refusal(host, ctx.allowed_networks)
    if refusal:
        report.error("url.private-address", pointer, f"the host is not public: {refusal}")


def _check_url(
    report: _Report, ctx: RuleContext, value: Any, pointer: str, binding: Any = None
) -> None:
    """One URL. `binding` is the interface's protocol binding, or None for plain web URLs."""
    if not isinstance(value, str):
        return  # the type rules report it
    text = value
    if not text.strip():
        report.error("url.invalid", pointer, "the URL is empty")
        return
    grpc = isinstance(binding, str) and binding.upper() == "GRPC"
    host_port = _GRPC_HOST_PORT.fullmatch(text)
    if grpc and host_port and not text.lower().startswith(("http:", "https:")):
        # Spec v1.0 AgentInterface.url: gRPC endpoints may be plain "hostname:port".
        _check_host(report, ctx, host_port.group("host").strip("[]"), pointer)
        return
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        report.error("url.invalid", pointer, f"not a valid URL: {exc}")
        return
    # urlsplit silently drops tabs and newlines, so look at the text itself.
    if any(char.isspace() or ord(char) < 0x20 for char in text) or not parts.scheme or not host:
        hint = " (an unrendered template?)" if "{" in text else ""
        report.error("url.invalid", pointer, f"{text!r} is not an absolute URL{hint}")
        return
    scheme = parts.scheme.lower()
    # Custom or unknown bindings may use any scheme (e.g. wss for a websocket transport).
    custom = binding is not None and not (
        isinstance(binding, str) and binding.upper() in KNOWN_BINDINGS
    )
    allowed = {"http", "https", "grpc", "grpcs"} if grpc else {"http", "https"}
    if not custom and scheme not in allowed:
        report.error("url.unsupported-scheme", pointer, f"scheme {scheme!r} is not http(s)")
        return
    if scheme in _INSECURE_SCHEMES and not ctx.allow_http:
        message = f"{scheme}: URL; A2A expects https in production"
        report.warning("url.insecure-http", pointer, message)
    ascii_host = _ascii_host(host)
    if ascii_host is None:
        report.error("url.invalid", pointer, f"{host!r} is not a valid host name")
        return
    _check_host(report, ctx, ascii_host, pointer)


# --- rules ---------------------------------------------------------------------------------


@dataclass
class _Run:
    data: dict[str, Any]  # as served: every pointer points into this
    card: dict[str, Any]  # the v1.0 normal form
    shape: Shape
    ctx: RuleContext
    report: _Report


def _rule_endpoint(run: _Run) -> None:
    if run.shape == "unknown" and "supportedInterfaces" not in run.card:
        run.report.error(
            "card.no-endpoint", "", "the card has neither 'supportedInterfaces' nor 'url'"
        )


def _rule_top_level(run: _Run) -> None:
    _check_object(run.report, run.data, "", CARD_FIELDS, REQUIRED_BY_SHAPE[run.shape])
    if run.shape == "v0.3" and "preferredTransport" not in run.data:
        # v0.3 prose makes it REQUIRED; the v0.3 schema only gives a default (JSONRPC).
        run.report.warning(
            "card.missing-preferred-transport",
            "/preferredTransport",
            "v0.3 cards should declare 'preferredTransport' (JSONRPC is assumed)",
        )


def _check_binding(report: _Report, value: Any, pointer: str) -> None:
    if not isinstance(value, str) or not value.strip() or value in KNOWN_BINDINGS:
        return
    if _URI.match(value):
        # Spec v1.0 section 5.8: custom bindings SHOULD be URIs.
        report.info("interface.custom-binding", pointer, f"custom protocol binding {value!r}")
        return
    upper = value.upper()
    hint = upper if upper in KNOWN_BINDINGS else _BINDING_HINTS.get(upper)
    suggestion = f"; did you mean {hint!r}?" if hint else ""
    report.warning(
        "interface.unknown-binding",
        pointer,
        f"{value!r} is not JSONRPC, GRPC, HTTP+JSON or a URI{suggestion}",
    )


def _check_protocol_version(report: _Report, value: Any, pointer: str) -> None:
    if isinstance(value, str) and value.strip() and not PROTOCOL_VERSION.match(value):
        report.warning(
            "card.protocol-version-format",
            pointer,
            f"{value!r} does not look like a protocol version ('1.0', '0.3.0')",
        )


def _check_interface(run: _Run, entry: dict[str, Any], pointer: str, binding_key: str) -> None:
    binding = entry.get(binding_key)
    binding_pointer = extend_pointer(pointer, binding_key)
    if binding_key == "protocolBinding" and "protocolBinding" not in entry:
        # Early v1.0 drafts (corpus 015) said "transport"; still classify the URL by it.
        binding, binding_pointer = entry.get("transport"), extend_pointer(pointer, "transport")
    _check_binding(run.report, binding, binding_pointer)
    _check_url(
        run.report,
        run.ctx,
        entry.get("url"),
        extend_pointer(pointer, "url"),
        binding if isinstance(binding, str) else "",
    )
    version_pointer = extend_pointer(pointer, "protocolVersion")
    _check_protocol_version(run.report, entry.get("protocolVersion"), version_pointer)


def _rule_interfaces(run: _Run) -> None:
    data = run.data
    required = ("url", "protocolBinding", "protocolVersion")
    for index, entry in _dicts(data.get("supportedInterfaces")):
        pointer = extend_pointer("/supportedInterfaces", index)
        _check_object(run.report, entry, pointer, INTERFACE_FIELDS, required)
        _check_interface(run, entry, pointer, "protocolBinding")
    for index, entry in _dicts(data.get("additionalInterfaces")):
        pointer = extend_pointer("/additionalInterfaces", index)
        _check_object(run.report, entry, pointer, INTERFACE_FIELDS, ("url", "transport"))
        _check_interface(run, entry, pointer, "transport")
    if "url" in data:
        # The v0.x main interface: url + preferredTransport (default JSONRPC).
        main = {"url": data["url"], "preferredTransport": data.get("preferredTransport", "JSONRPC")}
        _check_interface(run, main, "", "preferredTransport")


def _rule_provider_and_links(run: _Run) -> None:
    provider = run.data.get("provider")
    if isinstance(provider, dict):
        _check_object(run.report, provider, "/provider", PROVIDER_FIELDS, ("organization", "url"))
        _check_url(run.report, run.ctx, provider.get("url"), "/provider/url")
    for name in ("documentationUrl", "iconUrl"):
        _check_url(run.report, run.ctx, run.data.get(name), json_pointer(name))


def _rule_capabilities(run: _Run) -> None:
    capabilities = run.data.get("capabilities")
    if not isinstance(capabilities, dict):
        return
    _check_object(run.report, capabilities, "/capabilities", CAPABILITY_FIELDS)
    seen: set[str] = set()
    for index, extension in _dicts(capabilities.get("extensions")):
        pointer = extend_pointer("/capabilities/extensions", index)
        _check_object(run.report, extension, pointer, EXTENSION_FIELDS, ("uri",))
        uri = extension.get("uri")
        if not isinstance(uri, str):
            continue
        uri_pointer = extend_pointer(pointer, "uri")
        if not uri.strip():
            run.report.error("card.empty-value", uri_pointer, "'uri' must not be empty")
        elif uri in seen:
            run.report.warning("extension.duplicate-uri", uri_pointer, f"{uri!r} is declared twice")
        seen.add(uri)


def _rule_skills(run: _Run) -> None:
    first_seen: dict[str, int] = {}
    for index, skill in _dicts(run.data.get("skills")):
        pointer = extend_pointer("/skills", index)
        _check_object(run.report, skill, pointer, SKILL_FIELDS, SKILL_REQUIRED)
        skill_id = skill.get("id")
        if not isinstance(skill_id, str) or not skill_id.strip():
            continue
        where = extend_pointer(pointer, "id")
        if skill_id in first_seen:
            first = extend_pointer("/skills", first_seen[skill_id])
            message = f"id {skill_id!r} is also used by {first}"
            run.report.error("skill.duplicate-id", where, message)
        else:
            first_seen[skill_id] = index
        if not KEBAB_CASE.match(skill_id):
            # Seed 004: "Skill id should be kebab-case (code-review, not CodeReview)".
            run.report.warning(
                "skill.id-not-kebab-case", where, f"{skill_id!r} is not kebab-case ('code-review')"
            )


def _mode_lists(data: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    yield data.get("defaultInputModes"), "/defaultInputModes"
    yield data.get("defaultOutputModes"), "/defaultOutputModes"
    for index, skill in _dicts(data.get("skills")):
        yield skill.get("inputModes"), extend_pointer("/skills", index, "inputModes")
        yield skill.get("outputModes"), extend_pointer("/skills", index, "outputModes")


def _rule_modes(run: _Run) -> None:
    for modes, pointer in _mode_lists(run.data):
        for index, mode in _items(modes):
            if not isinstance(mode, str):
                continue  # reported as card.wrong-type
            try:
                parse_media_type(mode)
            except MediaTypeError as exc:
                where = extend_pointer(pointer, index)
                if is_legacy_mode_word(mode):
                    message = f"{mode!r} is a legacy mode word, not a media type"
                    run.report.warning("mode.legacy-word", where, message)
                else:
                    run.report.error("mode.invalid", where, f"{mode!r} is not a media type: {exc}")


def _scheme_body(
    report: _Report, scheme: dict[str, Any], pointer: str
) -> tuple[dict[str, Any], str, tuple[str, ...], str] | None:
    """(members, their pointer, required names, api-key location key) of either scheme form."""
    if "type" in scheme:  # v0.3: OpenAPI style, discriminated by "type"
        kind = scheme["type"]
        required = _SCHEME_TYPES.get(kind) if isinstance(kind, str) else None
        if required is None:
            report.error(
                "security.unknown-scheme-type",
                extend_pointer(pointer, "type"),
                f"unknown scheme type {kind!r}",
            )
            return None
        return scheme, pointer, required, "in"
    wrappers = [key for key in scheme if key in _SCHEME_WRAPPERS]  # v1.0: one oneof member
    if len(wrappers) != 1:
        report.error(
            "security.unknown-scheme-type",
            pointer,
            f"expected one of {', '.join(_SCHEME_WRAPPERS)} or a 'type'; "
            f"found {', '.join(wrappers) or 'none'}",
        )
        return None
    body, body_pointer = scheme[wrappers[0]], extend_pointer(pointer, wrappers[0])
    if not isinstance(body, dict):
        report.error("card.wrong-type", body_pointer, f"must be an object, not {_kind(body)}")
        return None
    return body, body_pointer, _SCHEME_WRAPPERS[wrappers[0]], "location"


def _check_scheme(report: _Report, ctx: RuleContext, scheme: dict[str, Any], pointer: str) -> None:
    found = _scheme_body(report, scheme, pointer)
    if found is None:
        return
    body, body_pointer, required, location_key = found
    _check_object(report, body, body_pointer, SCHEME_FIELDS, required)
    location = body.get(location_key)
    if location_key in required and isinstance(location, str):
        if location not in _API_KEY_LOCATIONS:
            report.error(
                "card.invalid-value",
                extend_pointer(body_pointer, location_key),
                f"{location!r} is not one of {', '.join(_API_KEY_LOCATIONS)}",
            )
    for name in ("openIdConnectUrl", "oauth2MetadataUrl"):
        _check_url(report, ctx, body.get(name), extend_pointer(body_pointer, name))
    flows = body.get("flows")
    for flow_name, flow in flows.items() if isinstance(flows, dict) else ():
        for name in _FLOW_URL_FIELDS if isinstance(flow, dict) else ():
            where = extend_pointer(body_pointer, "flows", flow_name, name)
            _check_url(report, ctx, flow.get(name), where)


def _requirement_names(
    report: _Report, entry: dict[str, Any], pointer: str, v1_form_expected: bool
) -> Iterator[tuple[str, str]]:
    """Scheme names used by one requirement (either form), checking the scope lists."""
    if set(entry) == {"schemes"} and isinstance(entry["schemes"], dict):
        for name, scopes in entry["schemes"].items():
            where = extend_pointer(pointer, "schemes", name)
            if not isinstance(scopes, dict):
                message = f"must be an object {{'list': [scopes]}}, not {_kind(scopes)}"
                report.error("card.wrong-type", where, message)
            elif "list" in scopes:
                _check_type(report, scopes["list"], STRINGS, extend_pointer(where, "list"))
            yield name, where
        return
    if v1_form_expected:
        report.error(
            "card.wrong-type",
            pointer,
            "must be {'schemes': {name: {'list': [scopes]}}}, not the v0.3 {name: [scopes]} form",
        )
    for name, scopes in entry.items():
        where = extend_pointer(pointer, name)
        if not v1_form_expected:
            _check_type(report, scopes, STRINGS, where)
        yield name, where


def _requirement_lists(data: dict[str, Any]) -> Iterator[tuple[Any, str, bool]]:
    """(requirements, pointer, v1.0 form expected) for the card and every skill."""
    holders = [(data, "")]
    holders += [(skill, extend_pointer("/skills", i)) for i, skill in _dicts(data.get("skills"))]
    for holder, base in holders:
        for key in ("securityRequirements", "security"):
            yield holder.get(key), extend_pointer(base, key), key == "securityRequirements"


def _rule_security(run: _Run) -> None:
    schemes = run.data.get("securitySchemes")
    declared = set(schemes) if isinstance(schemes, dict) else set()
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        pointer = extend_pointer("/securitySchemes", name)
        if isinstance(scheme, dict):
            _check_scheme(run.report, run.ctx, scheme, pointer)
        else:
            run.report.error("card.wrong-type", pointer, f"must be an object, not {_kind(scheme)}")
    for requirements, pointer, v1_form in _requirement_lists(run.data):
        for index, entry in _dicts(requirements):
            entry_pointer = extend_pointer(pointer, index)
            for name, where in _requirement_names(run.report, entry, entry_pointer, v1_form):
                if name not in declared:
                    run.report.error(
                        "security.undeclared-scheme", where, f"{name!r} is not in 'securitySchemes'"
                    )


def _rule_signatures(run: _Run) -> None:
    for index, signature in _dicts(run.data.get("signatures")):
        pointer = extend_pointer("/signatures", index)
        _check_object(run.report, signature, pointer, SIGNATURE_FIELDS, ("protected", "signature"))


def _layout_of(protocol_version: str) -> Shape:
    if not protocol_version.startswith("0."):
        return "v1.0"
    return "v0.3" if protocol_version.startswith("0.3") else "v0.2"


def _rule_versions(run: _Run) -> None:
    version = run.data.get("version")
    if isinstance(version, str) and version.strip() and not SEMVER.match(version):
        run.report.warning(
            "card.version-not-semver", "/version", f"{version!r} is not MAJOR.MINOR.PATCH (semver)"
        )
    declared = run.data.get("protocolVersion")
    _check_protocol_version(run.report, declared, "/protocolVersion")
    if run.shape not in ("v0.2", "v0.3") or not isinstance(declared, str):
        return
    if PROTOCOL_VERSION.match(declared) and _layout_of(declared) != run.shape:
        # Common in the wild (even the v0.3.0 spec sample says 0.2.9); the layout decides.
        run.report.info(
            "card.layout-version-mismatch",
            "/protocolVersion",
            f"declares protocol {declared} but has the {run.shape} layout; read as {run.shape}",
        )


_DEPRECATED_TOP = {
    "url": "supportedInterfaces[].url",
    "preferredTransport": "supportedInterfaces[].protocolBinding",
    "additionalInterfaces": "supportedInterfaces",
    "protocolVersion": "supportedInterfaces[].protocolVersion",
    "supportsAuthenticatedExtendedCard": "capabilities.extendedAgentCard",
    "supportsExtendedAgentCard": "capabilities.extendedAgentCard",
    "security": "securityRequirements",
}


def _deprecated_members(data: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(pointer, old name, v1.0 replacement) for each v0.x member found in a v1.0 card."""
    for name, replacement in _DEPRECATED_TOP.items():
        if name in data:
            yield json_pointer(name), name, replacement
    capabilities = data.get("capabilities")
    if isinstance(capabilities, dict) and "stateTransitionHistory" in capabilities:
        yield "/capabilities/stateTransitionHistory", "stateTransitionHistory", "nothing (removed)"
    for index, skill in _dicts(data.get("skills")):
        if "security" in skill:
            pointer = extend_pointer("/skills", index, "security")
            yield pointer, "security", "securityRequirements"
    for index, entry in _dicts(data.get("supportedInterfaces")):
        if "transport" in entry:
            pointer = extend_pointer("/supportedInterfaces", index, "transport")
            yield pointer, "transport", "protocolBinding"
    schemes = data.get("securitySchemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        if isinstance(scheme, dict) and "type" in scheme:
            pointer = extend_pointer("/securitySchemes", name, "type")
            yield pointer, "type", "a wrapper member such as httpAuthSecurityScheme"


def _rule_deprecated(run: _Run) -> None:
    if run.shape in ("v1.0", "unknown"):
        for pointer, name, replacement in _deprecated_members(run.data):
            message = f"{name!r} is a v0.x member; v1.0 uses {replacement}"
            run.report.warning("card.deprecated-field", pointer, message)
    elif "authentication" in run.data:
        run.report.warning(
            "card.deprecated-field",
            "/authentication",
            "'authentication' is the v0.1 member; v0.2 and later use securitySchemes and security",
        )


def _known_objects(data: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, dict[str, str]]]:
    """The objects whose members we know, with the table of their camelCase names.

    Extension params and embedded schemas are not listed: snake_case is legitimate there.
    """
    yield data, "", CARD_FIELDS
    for key, fields in (("capabilities", CAPABILITY_FIELDS), ("provider", PROVIDER_FIELDS)):
        if isinstance(data.get(key), dict):
            yield data[key], json_pointer(key), fields
    capabilities = data.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    arrays = (
        ("/skills", data.get("skills"), SKILL_FIELDS),
        ("/supportedInterfaces", data.get("supportedInterfaces"), INTERFACE_FIELDS),
        ("/additionalInterfaces", data.get("additionalInterfaces"), INTERFACE_FIELDS),
        ("/signatures", data.get("signatures"), SIGNATURE_FIELDS),
        ("/capabilities/extensions", extensions, EXTENSION_FIELDS),
    )
    for base, items, fields in arrays:
        for index, item in _dicts(items):
            yield item, extend_pointer(base, index), fields
    schemes = data.get("securitySchemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        if not isinstance(scheme, dict):
            continue
        pointer = extend_pointer("/securitySchemes", name)
        yield scheme, pointer, SCHEME_FIELDS
        for wrapper in _SCHEME_WRAPPERS:
            if isinstance(scheme.get(wrapper), dict):
                yield scheme[wrapper], extend_pointer(pointer, wrapper), SCHEME_FIELDS


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _rule_snake_case(run: _Run) -> None:
    for obj, pointer, fields in _known_objects(run.data):
        for key in obj:
            if isinstance(key, str) and "_" in key and _camel(key) in fields:
                run.report.warning(
                    "card.snake-case-key",
                    extend_pointer(pointer, key),
                    f"A2A JSON is camelCase: {key!r} should be {_camel(key)!r} (clients ignore it)",
                )


def _strings(root: Any) -> Iterator[tuple[str, list[str | int]]]:
    """Every string value with its path, in document order; iterative so depth never matters.

    Paths are key lists (pointers are built only for findings): cards can be large.
    """
    stack: list[tuple[Any, list[str | int]]] = [(root, [])]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            yield value, path
        elif isinstance(value, (dict, list)):
            keys = list(value) if isinstance(value, dict) else list(range(len(value)))
            stack.extend((value[key], [*path, key]) for key in reversed(keys))


def _rule_templates(run: _Run) -> None:
    for text, path in _strings(run.data):
        match = _TEMPLATE.search(text)
        if match:
            run.report.warning(
                "card.unrendered-template",
                json_pointer(*path),
                f"contains the unrendered template {match.group()[:80]!r}",
            )


_RULES: tuple[Callable[[_Run], None], ...] = (
    _rule_endpoint,
    _rule_top_level,
    _rule_interfaces,
    _rule_provider_and_links,
    _rule_capabilities,
    _rule_skills,
    _rule_modes,
    _rule_security,
    _rule_signatures,
    _rule_versions,
    _rule_deprecated,
    _rule_snake_case,
    _rule_templates,
)


def validate_card(
    data: dict[str, Any], card: dict[str, Any], shape: Shape, ctx: RuleContext | None = None
) -> list[Finding]:
    """All findings for one card. `data` is the JSON as served, `card` its v1.0 normal form.

    Never raises: wrong types anywhere become findings.
    """
    report = _Report()
    if not isinstance(data, dict):
        report.error("card.wrong-type", "", f"the card must be an object, not {_kind(data)}")
        return report.findings
    run = _Run(
        data=data,
        card=card if isinstance(card, dict) else {},
        shape=shape if shape in REQUIRED_BY_SHAPE else "unknown",
        ctx=ctx or RuleContext(),
        report=report,
    )
    for rule in _RULES:
        try:
            rule(run)
        except Exception as exc:  # noqa: BLE001 - one broken rule must not hide the others
            report.error("rules.internal-error", "", f"{rule.__name__} failed: {exc!r}")
    if report.dropped:
        message = f"{report.dropped} more findings were not recorded"
        report.findings.append(Finding("card.too-many-findings", "info", "", message))
    return report.findings

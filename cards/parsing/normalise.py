"""A card of any shape -> a new card in the v1.0 shape (reference section 1.4)."""

from __future__ import annotations

import copy
import json
from typing import Any

from cards.parsing.shape import Shape

_SCHEME_WRAPPERS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
# Top-level v0.x fields that have no place in a v1.0 card once folded into supportedInterfaces.
_CONNECTION_FIELDS = ("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
_EXTENDED_CARD_FIELDS = ("supportsAuthenticatedExtendedCard", "supportsExtendedAgentCard")
DEFAULT_TRANSPORT = "JSONRPC"
DEFAULT_PROTOCOL_VERSION = "0.3.0"


def _interfaces_from_legacy(card: dict[str, Any]) -> list[Any]:
    transport = card.get("preferredTransport")
    if not isinstance(transport, str) or not transport:
        transport = DEFAULT_TRANSPORT
    version = card.get("protocolVersion")
    if not isinstance(version, str) or not version:
        # a2a-sdk's card_resolver default; the v0.3 schema default too.
        version = DEFAULT_PROTOCOL_VERSION
    main = {"url": card.get("url"), "protocolBinding": transport, "protocolVersion": version}
    interfaces: list[Any] = [main]
    additional = card.get("additionalInterfaces")
    for entry in additional if isinstance(additional, list) else []:
        if not isinstance(entry, dict):
            interfaces.append(entry)  # left for the rules to report
            continue
        converted = {k: v for k, v in entry.items() if k != "transport"}
        converted["protocolBinding"] = entry.get("transport")
        converted.setdefault("protocolVersion", version)
        # v0.3 says additionalInterfaces SHOULD repeat the main interface: don't list it twice.
        if converted.get("url") == main["url"] and converted["protocolBinding"] == transport:
            continue
        interfaces.append(converted)
    return interfaces


def _normalise_interfaces(card: dict[str, Any]) -> None:
    if "supportedInterfaces" not in card and "url" in card:
        card["supportedInterfaces"] = _interfaces_from_legacy(card)
    interfaces = card.get("supportedInterfaces")
    for entry in interfaces if isinstance(interfaces, list) else []:
        # Early v1.0 drafts (corpus 015) still said "transport".
        if isinstance(entry, dict) and "protocolBinding" not in entry and "transport" in entry:
            entry["protocolBinding"] = entry.pop("transport")
    # Folded into supportedInterfaces (or meaningless without it), as a2a-sdk does.
    for name in _CONNECTION_FIELDS:
        card.pop(name, None)


def _normalise_extended_card(card: dict[str, Any]) -> None:
    for name in _EXTENDED_CARD_FIELDS:
        value = card.get(name)
        if not isinstance(value, bool):
            continue  # absent, or a wrong type left in place for the rules to report
        capabilities = card.setdefault("capabilities", {})
        if isinstance(capabilities, dict):
            capabilities.setdefault("extendedAgentCard", value)
            del card[name]
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict):
        capabilities.pop("stateTransitionHistory", None)  # removed in v1.0 (PR #1396)


def _requirement_from_legacy(entry: Any) -> Any:
    """{name: [scopes]} -> {schemes: {name: {list: [scopes]}}}; other shapes kept."""
    if not isinstance(entry, dict):
        return entry
    if set(entry) == {"schemes"} and isinstance(entry["schemes"], dict):
        # Already v1.0; tolerate bare scope lists inside (corpus 015).
        return {"schemes": _scope_lists(entry["schemes"])}
    return {"schemes": _scope_lists(entry)}


def _scope_lists(schemes: dict[str, Any]) -> dict[str, Any]:
    return {name: {"list": v} if isinstance(v, list) else v for name, v in schemes.items()}


def _normalise_requirements(holder: dict[str, Any]) -> None:
    if "security" in holder:
        legacy = holder.pop("security")
        if "securityRequirements" not in holder:
            holder["securityRequirements"] = legacy
    if isinstance(holder.get("securityRequirements"), list):
        holder["securityRequirements"] = [
            _requirement_from_legacy(entry) for entry in holder["securityRequirements"]
        ]


def _normalise_scheme(scheme: Any) -> Any:
    kind = scheme.get("type") if isinstance(scheme, dict) else None
    if not isinstance(kind, str) or kind not in _SCHEME_WRAPPERS:
        return scheme
    body = {k: v for k, v in scheme.items() if k != "type"}
    if kind == "apiKey" and "in" in body and "location" not in body:
        body["location"] = body.pop("in")
    return {_SCHEME_WRAPPERS[kind]: body}


def _normalise_security(card: dict[str, Any]) -> None:
    _normalise_requirements(card)
    skills = card.get("skills")
    for skill in skills if isinstance(skills, list) else []:
        if isinstance(skill, dict):
            _normalise_requirements(skill)
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        card["securitySchemes"] = {name: _normalise_scheme(s) for name, s in schemes.items()}


def _copy_json(data: dict[str, Any]) -> dict[str, Any]:
    # A JSON round trip copies a parsed document several times faster than deepcopy.
    try:
        copied = json.loads(json.dumps(data))
    except (TypeError, ValueError):  # not plain JSON (a caller's own dict): copy it as it is
        copied = copy.deepcopy(data)
    return copied if isinstance(copied, dict) else copy.deepcopy(data)


def normalise_card(data: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """A new dict in the v1.0 shape (reference section 1.4); `data` is left untouched.

    The folding is the same for every shape, as in a2a-sdk's card_resolver, because hybrids
    are common (v1.0 cards with `security`, top-level `url`, OpenAPI-style schemes); `shape`
    is part of the signature so callers state what they detected. Unknown members are kept:
    later modules need `schemas`, `x-*` fields and skill extras. Values of the wrong type are
    left as they are for the rules to report.
    """
    if not isinstance(data, dict):
        return {}
    card = _copy_json(data)
    _normalise_interfaces(card)
    _normalise_extended_card(card)
    _normalise_security(card)
    return card

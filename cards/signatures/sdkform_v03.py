"""a2a-sdk's ``parse_agent_card`` v0.3 -> v1.0 mapping, for :mod:`cards.signatures.sdkform`.

Applied to a shallow copy of the served card: the card itself is never modified.
"""

from __future__ import annotations

from typing import Any

_MISSING = object()
# parse_agent_card: legacy security scheme "type" -> the v1.0 oneof member that wraps it.
_SCHEME_TYPES = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


class Unsupported(Exception):
    """This card is one the plain builder does not reproduce; use the SDK path."""


# --- parse_agent_card's v0.3 -> v1.0 mapping, on a shallow copy --------------------------------


def _legacy_requirements(legacy: Any) -> list[dict[str, Any]]:
    if type(legacy) is not list or any(type(entry) is not dict for entry in legacy):
        raise Unsupported("legacy security is not a list of objects")
    return [
        {"schemes": {name: {"list": scopes} for name, scopes in entry.items()}} for entry in legacy
    ]


def _skills(skills: Any) -> Any:
    if type(skills) is not list:
        raise Unsupported("skills is not a list")
    mapped = None
    for position, skill in enumerate(skills):
        if type(skill) is not dict:
            raise Unsupported("a skill is not an object")
        if "security" in skill:
            copy = dict(skill)
            legacy = copy.pop("security")
            if "securityRequirements" not in copy and legacy is not None:
                copy["securityRequirements"] = _legacy_requirements(legacy)
            mapped = mapped if mapped is not None else list(skills)
            mapped[position] = copy
    return mapped if mapped is not None else skills


def _schemes(schemes: Any) -> dict[str, Any]:
    if type(schemes) is not dict:
        raise Unsupported("securitySchemes is not an object")
    mapped: dict[str, Any] = {}
    for name, scheme in schemes.items():
        if type(scheme) is not dict:
            raise Unsupported("a security scheme is not an object")
        scheme_type = scheme.get("type")
        if scheme_type is not None and type(scheme_type) not in (str, bool, int, float):
            raise Unsupported("a security scheme type is not hashable")
        body = {k: v for k, v in scheme.items() if k != "type"}
        wrapper = _SCHEME_TYPES.get(scheme_type) if type(scheme_type) is str else None
        if wrapper is not None:
            if scheme_type == "apiKey" and "in" in body:
                body["location"] = body.pop("in")
            body = {wrapper: body}
        mapped[name] = body
    return mapped


def v1_view(data: dict[str, Any]) -> dict[str, Any]:
    """What ``parse_agent_card`` hands to ``ParseDict``, minus ``signatures``; ``data`` is not
    modified (only the containers the mapping changes are copied)."""
    card = {k: v for k, v in data.items() if k != "signatures"}
    if card.pop("supportsAuthenticatedExtendedCard", None):
        capabilities = card.get("capabilities", _MISSING)
        if capabilities is _MISSING:
            card["capabilities"] = {"extendedAgentCard": True}
        elif type(capabilities) is not dict:
            raise Unsupported("capabilities is not an object")
        elif "extendedAgentCard" not in capabilities:
            card["capabilities"] = {**capabilities, "extendedAgentCard": True}
    url = card.pop("url", None)
    transport = card.pop("preferredTransport", "JSONRPC")
    version = card.pop("protocolVersion", "0.3.0")
    additional = card.pop("additionalInterfaces", None) or []
    if "supportedInterfaces" not in card and url:
        if type(additional) is not list or any(type(i) is not dict for i in additional):
            raise Unsupported("additionalInterfaces is not a list of objects")
        card["supportedInterfaces"] = [
            {"url": url, "protocolBinding": transport, "protocolVersion": version}
        ] + [
            {"url": i.get("url"), "protocolBinding": i.get("transport"), "protocolVersion": version}
            for i in additional
        ]
    legacy = card.pop("security", None)
    if "securityRequirements" not in card and legacy is not None:
        card["securityRequirements"] = _legacy_requirements(legacy)
    if "skills" in card:
        card["skills"] = _skills(card["skills"])
    schemes = card.get("securitySchemes", {})
    if schemes:
        card["securitySchemes"] = _schemes(schemes)
    return card

"""Style rules: v0.x members left in v1.0 cards, snake_case keys and unrendered templates.

None of these stop a card from working as its author meant in every client; they are warnings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from cards.rules.context import Run
from cards.rules.fields import (
    CAPABILITY_FIELDS,
    CARD_FIELDS,
    EXTENSION_FIELDS,
    INTERFACE_FIELDS,
    PROVIDER_FIELDS,
    SCHEME_FIELDS,
    SIGNATURE_FIELDS,
    SKILL_FIELDS,
)
from cards.rules.objects import dicts
from cards.rules.security import SCHEME_WRAPPERS
from registry.findings import extend_pointer, json_pointer

_TEMPLATE = re.compile(r"\{\{.*?\}\}|\$\{[^}]*\}|\{%.*?%\}", re.DOTALL)

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
    for index, skill in dicts(data.get("skills")):
        if "security" in skill:
            pointer = extend_pointer("/skills", index, "security")
            yield pointer, "security", "securityRequirements"
    for index, entry in dicts(data.get("supportedInterfaces")):
        if "transport" in entry:
            pointer = extend_pointer("/supportedInterfaces", index, "transport")
            yield pointer, "transport", "protocolBinding"
    schemes = data.get("securitySchemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        if isinstance(scheme, dict) and "type" in scheme:
            pointer = extend_pointer("/securitySchemes", name, "type")
            yield pointer, "type", "a wrapper member such as httpAuthSecurityScheme"


def rule_deprecated(run: Run) -> None:
    if run.judged in ("v1.0", "unknown"):
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
        for index, item in dicts(items):
            yield item, extend_pointer(base, index), fields
    schemes = data.get("securitySchemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        if not isinstance(scheme, dict):
            continue
        pointer = extend_pointer("/securitySchemes", name)
        yield scheme, pointer, SCHEME_FIELDS
        for wrapper in SCHEME_WRAPPERS:
            if isinstance(scheme.get(wrapper), dict):
                yield scheme[wrapper], extend_pointer(pointer, wrapper), SCHEME_FIELDS


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def rule_snake_case(run: Run) -> None:
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


def rule_templates(run: Run) -> None:
    for text, path in _strings(run.data):
        match = _TEMPLATE.search(text)
        if match:
            run.report.warning(
                "card.unrendered-template",
                json_pointer(*path),
                f"contains the unrendered template {match.group()[:80]!r}",
            )

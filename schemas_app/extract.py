"""Where a card carries or names JSON Schemas.

* the top-level ``schemas`` map (seed 000): ``{"name": <JSON Schema>}``;
* every mode ``application/json;schema=<name>`` (any media type with a ``schema`` parameter) in
  ``defaultInputModes``/``defaultOutputModes`` and in each skill's ``inputModes``/``outputModes``;
  a skill without modes of its own inherits the card's, as :mod:`cards.indexing` does;
* skill ``inputFields``/``outputFields`` (seed 001 FieldDefinition) with a ``schema``.

Extraction is pure and total: values of the wrong type are skipped here (the checks report
them). Pointers refer to the document as served; the card keeps the same paths for these
members in every shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.findings import extend_pointer, json_pointer
from registry.mediatypes import MediaTypeError, parse_media_type

INPUT, OUTPUT = "input", "output"


@dataclass(frozen=True)
class DeclaredSchema:
    name: str
    value: Any
    pointer: str


@dataclass(frozen=True)
class ModeRef:
    """A mode naming a schema."""

    direction: str
    name: str
    media_type: str  # canonical form
    pointer: str  # of the mode string
    skill_index: int | None  # None for the card's default modes
    skill_id: str
    inherited: bool  # a skill without modes of its own, using the card's default mode


@dataclass(frozen=True)
class FieldRef:
    """One entry of a skill's inputFields/outputFields."""

    direction: str
    skill_index: int
    skill_id: str
    index: int
    pointer: str
    value: Any  # the FieldDefinition as written (may be anything)

    @property
    def name(self) -> str | None:
        name = self.value.get("name") if isinstance(self.value, dict) else None
        return name if isinstance(name, str) else None


@dataclass(frozen=True)
class ExtensionRef:
    index: int
    uri: str
    params: Any
    has_params: bool
    pointer: str


@dataclass
class CardSchemas:
    schemas_present: bool = False
    schemas_value: Any = None
    declared: dict[str, DeclaredSchema] = field(default_factory=dict)
    modes: list[ModeRef] = field(default_factory=list)
    fields: list[FieldRef] = field(default_factory=list)
    extensions: list[ExtensionRef] = field(default_factory=list)
    skills: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def schema_modes_of_skill(self, skill_index: int, direction: str) -> list[ModeRef]:
        return [m for m in self.modes if m.skill_index == skill_index and m.direction == direction]

    def extension_uris(self) -> set[str]:
        return {ext.uri for ext in self.extensions}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def schema_name_of(mode: Any) -> tuple[str, str] | None:
    """``(schema name, canonical media type)`` when ``mode`` is a media type with a schema."""
    if not isinstance(mode, str):
        return None
    try:
        media = parse_media_type(mode)
    except MediaTypeError:
        return None
    name = media.schema
    if name is None:
        return None
    return name, media.canonical


def _mode_refs(
    modes: list[Any],
    pointer: str,
    direction: str,
    skill_index: int | None,
    skill_id: str,
    inherited: bool,
) -> list[ModeRef]:
    refs: list[ModeRef] = []
    seen: set[str] = set()
    for index, mode in enumerate(modes):
        found = schema_name_of(mode)
        if found is None or found[1] in seen:
            continue
        seen.add(found[1])
        refs.append(
            ModeRef(
                direction=direction,
                name=found[0],
                media_type=found[1],
                pointer=extend_pointer(pointer, index),
                skill_index=skill_index,
                skill_id=skill_id,
                inherited=inherited,
            )
        )
    return refs


def extract(card: dict[str, Any]) -> CardSchemas:
    out = CardSchemas()
    if "schemas" in card:
        out.schemas_present = True
        out.schemas_value = card["schemas"]
        if isinstance(card["schemas"], dict):
            for name, value in card["schemas"].items():
                out.declared[name] = DeclaredSchema(name, value, json_pointer("schemas", name))

    defaults = {
        INPUT: (_list(card.get("defaultInputModes")), "/defaultInputModes"),
        OUTPUT: (_list(card.get("defaultOutputModes")), "/defaultOutputModes"),
    }
    for direction, (modes, pointer) in defaults.items():
        out.modes.extend(_mode_refs(modes, pointer, direction, None, "", False))

    for skill_index, skill in enumerate(_list(card.get("skills"))):
        if not isinstance(skill, dict):
            continue
        out.skills.append((skill_index, skill))
        raw_id = skill.get("id")
        skill_id = raw_id if isinstance(raw_id, str) else ""
        own = {INPUT: "inputModes", OUTPUT: "outputModes"}
        for direction, key in own.items():
            modes = [m for m in _list(skill.get(key)) if isinstance(m, str)]
            if modes:
                pointer = extend_pointer("/skills", skill_index, key)
                out.modes.extend(
                    _mode_refs(
                        _list(skill.get(key)), pointer, direction, skill_index, skill_id, False
                    )
                )
            else:
                default_modes, default_pointer = defaults[direction]
                out.modes.extend(
                    _mode_refs(
                        default_modes, default_pointer, direction, skill_index, skill_id, True
                    )
                )
        for direction, key in ((INPUT, "inputFields"), (OUTPUT, "outputFields")):
            for index, value in enumerate(_list(skill.get(key))):
                out.fields.append(
                    FieldRef(
                        direction=direction,
                        skill_index=skill_index,
                        skill_id=skill_id,
                        index=index,
                        pointer=extend_pointer("/skills", skill_index, key, index),
                        value=value,
                    )
                )

    capabilities = card.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    for index, ext in enumerate(_list(extensions)):
        if isinstance(ext, dict) and isinstance(ext.get("uri"), str) and ext["uri"]:
            out.extensions.append(
                ExtensionRef(
                    index=index,
                    uri=ext["uri"],
                    params=ext.get("params"),
                    has_params="params" in ext,
                    pointer=extend_pointer("/capabilities/extensions", index),
                )
            )
    return out

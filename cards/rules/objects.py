"""Generic checks of one object's members: presence, type and non-emptiness.

Also the iteration helpers every rule uses to walk values that may have the wrong type.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cards.rules.context import Report
from cards.rules.fields import (
    BOOLEAN,
    NON_EMPTY_ARRAYS,
    NON_EMPTY_STRINGS,
    OBJECT,
    OBJECTS,
    STRING,
    STRINGS,
)
from registry.findings import extend_pointer


def kind_of(value: Any) -> str:
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


def items(value: Any) -> Iterator[tuple[int, Any]]:
    """Enumerate a list; anything else (already reported as a wrong type) yields nothing."""
    return enumerate(value) if isinstance(value, list) else iter(())


def dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in items(value) if isinstance(item, dict))


def check_type(report: Report, value: Any, expected: str, pointer: str) -> bool:
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
        report.error("card.wrong-type", pointer, f"must be {expected}, not {kind_of(value)}")
        return False
    element = STRING if expected == STRINGS else OBJECT if expected == OBJECTS else None
    if element is not None:
        for index, item in enumerate(value):
            if not _check_type_quiet(item, element):
                report.error(
                    "card.wrong-type",
                    extend_pointer(pointer, index),
                    f"must be {element}, not {kind_of(item)}",
                )
    return True


def _check_type_quiet(value: Any, expected: str) -> bool:
    return isinstance(value, str) if expected == STRING else isinstance(value, dict)


def check_object(
    report: Report,
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
        if not check_type(report, value, expected, where) or name not in required:
            continue
        if name in NON_EMPTY_ARRAYS and isinstance(value, list) and not value:
            report.error("card.empty-value", where, f"{name!r} must have at least one element")
        elif name in NON_EMPTY_STRINGS and isinstance(value, str) and not value.strip():
            report.error("card.empty-value", where, f"{name!r} must not be empty")

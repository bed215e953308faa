"""Reading schema nodes: local $ref, allOf folding, the types and values a node admits, and the
small helpers the rules share."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from schemas_app import budget
from schemas_app.analysis import resolve_pointer
from schemas_app.compat.kinds import (
    _ANNOTATIONS,
    _COMBINATORS,
    _FORMAT_ASSERTED,
    COMPATIBLE_LENIENT,
    COMPATIBLE_STRICT,
    MAX_STEPS,
)
from schemas_app.validation import DEFAULT_DRAFT, DRAFT2020


@dataclass(frozen=True)
class Difference:
    type: str
    pointer: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "pointer": self.pointer,
            "compatible": self.type in COMPATIBLE_STRICT,
            "lenient_compatible": self.type in COMPATIBLE_LENIENT,
        }


class BudgetExceeded(Exception):
    """The schemas are too intricate to compare within MAX_STEPS, or the schema budget of the
    task (:mod:`schemas_app.budget`) is spent."""


@dataclass(frozen=True)
class _Side:
    root: Any
    draft: str


@dataclass
class _Context:
    steps: int = 0
    visiting: set[tuple[int, int]] = field(default_factory=set)
    patterns: dict[str, Any] = field(default_factory=dict)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded
        if self.steps % 64 == 0:
            self.check_budget()

    def check_budget(self) -> None:
        spending = budget.current()
        if spending is not None and spending.over():
            raise BudgetExceeded


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _assertions(node: Any, draft: str) -> dict[str, Any]:
    """The keywords of ``node`` that constrain instances."""
    if not isinstance(node, dict):
        return {}
    keep = {k: v for k, v in node.items() if k not in _ANNOTATIONS}
    if draft not in _FORMAT_ASSERTED:
        keep.pop("format", None)
    if "if" in keep and "then" not in keep and "else" not in keep:
        keep.pop("if")
    return keep


def _accepts_all(node: Any, draft: str) -> bool:
    return node is True or (isinstance(node, dict) and not _assertions(node, draft))


def _deref(node: Any, side: _Side) -> Any:
    """Follow local ``$ref`` chains; ``$ref`` siblings (2019-09+) are kept as an allOf."""
    for _ in range(32):
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            return node
        ok, target = resolve_pointer(side.root, ref[1:])
        if not ok:
            return node
        if side.draft in _FORMAT_ASSERTED:  # drafts <= 7 ignore the siblings of $ref
            node = target
            continue
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if not _assertions(siblings, side.draft):
            node = target
        elif isinstance(target, dict) and not set(_assertions(target, side.draft)) & set(
            _assertions(siblings, side.draft)
        ):
            node = {**target, **siblings}
        else:
            return {"allOf": [target, siblings]}
    return node


def _unwrap(node: Any, side: _Side) -> Any:
    """Dereference, fold mergeable allOf branches into their parent, and read
    ``{"allOf": [X]}`` (or anyOf/oneOf) with nothing else as X."""
    for _ in range(32):
        node = _deref(node, side)
        if not isinstance(node, dict):
            return node
        folded = _fold_all_of(node, side)
        if folded is not node:
            node = folded
            continue
        assertions = _assertions(node, side.draft)
        if len(assertions) != 1:
            return node
        ((key, value),) = assertions.items()
        if key in _COMBINATORS and isinstance(value, list) and len(value) == 1:
            node = value[0]
            continue
        return node
    return node


# additionalProperties & co. only see their own object's properties: merging another branch's
# properties next to them would change what validates.
_CONTEXTUAL = frozenset(
    {"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
)
_STRUCTURAL = frozenset({"properties", "patternProperties", "items", "prefixItems"})


def _fold_all_of(node: dict[str, Any], side: _Side) -> dict[str, Any]:
    """``node`` with its allOf branches merged into it, or ``node`` itself when they do not
    merge without changing the meaning (conflicting keywords)."""
    branches = node.get("allOf")
    if not isinstance(branches, list) or not branches:
        return node
    merged = {k: v for k, v in node.items() if k != "allOf"}
    for raw in branches:
        branch = _deref(raw, side)
        if _accepts_all(branch, side.draft):
            continue
        if not isinstance(branch, dict):
            return node
        own = _assertions(branch, side.draft)
        if (set(merged) & _CONTEXTUAL and set(own) & _STRUCTURAL) or (
            set(own) & _CONTEXTUAL and set(merged) & _STRUCTURAL
        ):
            return node
        for key, value in own.items():
            if key not in merged or _canon(merged[key]) == _canon(value):
                merged[key] = value
            elif (
                key == "properties"
                and isinstance(value, dict)
                and isinstance(merged[key], dict)
                and not set(value) & set(merged[key])
            ):
                merged[key] = {**merged[key], **value}
            elif key == "required" and isinstance(value, list) and isinstance(merged[key], list):
                merged[key] = sorted({*merged[key], *value}, key=str)
            else:
                return node
    return merged


def _merge(bare: dict[str, Any], branch: Any, side: _Side) -> dict[str, Any] | None:
    """``bare AND branch`` as one schema, or None when they do not merge."""
    existing: list[Any] = bare["allOf"] if isinstance(bare.get("allOf"), list) else []
    folded = _fold_all_of({**bare, "allOf": [*existing, branch]}, side)
    return None if "allOf" in folded else folded


def _types(node: dict[str, Any]) -> set[str] | None:
    """The JSON types an instance may have (None: any), from type, enum and const."""
    result: set[str] | None = None
    declared = node.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        result = {t for t in declared if isinstance(t, str)}
    values = _enum(node)
    if values is not None:
        from_values = {_json_type(v) for v in values}
        result = from_values if result is None else _meet(result, from_values)
    if result is not None and "number" in result:
        result = result | {"integer"}
    return result


def _meet(types: set[str], values: set[str]) -> set[str]:
    out = set()
    for t in values:
        if t in types or (t == "integer" and "number" in types):
            out.add(t)
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


def _enum(node: dict[str, Any]) -> list[Any] | None:
    if "const" in node:
        return [node["const"]]
    values = node.get("enum")
    return values if isinstance(values, list) else None


def _keyword(name: str) -> str:
    parts = name.lower().split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def _numeric_bound(node: dict[str, Any], side: str) -> tuple[float, bool] | None:
    """The tightest (value, exclusive) bound on one side, from both keyword forms."""
    inclusive: Any = node.get("maximum" if side == "max" else "minimum")
    exclusive: Any = node.get("exclusiveMaximum" if side == "max" else "exclusiveMinimum")
    bounds: list[tuple[float, bool]] = []
    if _is_number(inclusive):
        bounds.append((inclusive, exclusive is True))  # draft 4: boolean exclusive flag
    if _is_number(exclusive):
        bounds.append((exclusive, True))
    if not bounds:
        return None
    if side == "max":
        return min(bounds, key=lambda b: (b[0], not b[1]))
    return max(bounds, key=lambda b: (b[0], b[1]))


def _model(node: dict[str, Any]) -> str:
    extra = node.get("additionalProperties")
    patterns = node.get("patternProperties")
    if not patterns and (extra is None or extra is True or extra == {}):
        return "open"
    if not patterns and extra is False:
        return "closed"
    return "partial"


def _tuple(node: dict[str, Any], draft: str) -> tuple[list[Any] | None, Any, str]:
    """(positional item schemas or None, schema of the remaining items, its keyword)."""
    prefix = node.get("prefixItems")
    if draft in (DRAFT2020, DEFAULT_DRAFT) and isinstance(prefix, list):
        return prefix, node.get("items"), "items"
    items = node.get("items")
    if isinstance(items, list):
        return items, node.get("additionalItems"), "additionalItems"
    return None, items, "items"


def _dependency_maps(node: dict[str, Any]) -> tuple[dict[str, set[str]], dict[str, Any]]:
    arrays: dict[str, set[str]] = {}
    schemas: dict[str, Any] = {}
    for key in ("dependencies", "dependentRequired", "dependentSchemas"):
        value = node.get(key)
        if not isinstance(value, dict):
            continue
        for name, dep in value.items():
            if isinstance(dep, list):
                arrays[name] = {d for d in dep if isinstance(d, str)}
            elif isinstance(dep, (dict, bool)):
                schemas[name] = dep
    return arrays, schemas


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = _canon(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _max_matching(left: int, right: int, edges: set[tuple[int, int]]) -> dict[int, int]:
    """Maximum bipartite matching (Kuhn): returns {right index: left index}."""
    adjacency: dict[int, list[int]] = {
        i: [j for j in range(right) if (i, j) in edges] for i in range(left)
    }
    match: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in adjacency[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in match or augment(match[j], seen):
                match[j] = i
                return True
        return False

    for i in range(left):
        augment(i, set())
    return match

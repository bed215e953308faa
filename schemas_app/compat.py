"""Compatibility of two versions of a JSON Schema (reference json-schemas.md section 4).

The core is :func:`backward_diff(old, new)`: can a reader using ``new`` read every instance
``old`` accepted? It walks both schemas in parallel and emits typed differences, named after
Confluent Schema Registry's ``Difference.Type``; a difference outside the compatible set breaks
compatibility. Two policies: STRICT (Confluent's default allow-list) and LENIENT (STRICT plus
the nine types Confluent's LENIENT policy relaxes, mostly about open content models).

Direction, as the registry applies it to an agent's named schema:

* input schema: breaking if the new one rejects payloads the old accepted:
  ``backward_diff(old, new)``;
* output schema: breaking if the new one allows outputs the old did not:
  ``backward_diff(new, old)``;
* used both ways: both.

Where this departs from Confluent (reference section 4.5 asks to decide and document):

* a property made required *with a default* breaks (Confluent: compatible). Validators do not
  insert defaults, so a payload without the member is rejected (Apicurio agrees);
* ``required`` gaining a name breaks even when the name has no ``properties`` entry (Confluent
  only looks at declared properties: the gap the reference found in its own corpus);
* ``format`` is diffed when the dialect asserts it (drafts 4, 6, 7, where jsonschema-rs checks
  formats): added or changed breaks, removed is compatible. In 2019-09/2020-12 it is an
  annotation and ignored, as Confluent always does;
* ``if``/``then``/``else`` are diffed (Confluent does not): adding a conditional breaks, removing
  it is compatible, a changed ``if`` breaks unless both versions accept each other, and ``then``/
  ``else`` are compared like any subschema;
* ``patternProperties`` keys are compared by coverage (a new pattern must accept what the
  additionalProperties it takes names from accepted, and vice versa);
* ``multipleOf`` is compared with exact rational arithmetic, not integer truncation;
* singleton combinators (``{"allOf": [X]}`` with nothing else) are read as ``X``.

Work is bounded: at most ``MAX_STEPS`` schema pairs are compared; beyond that the verdict is
``unknown``. Pattern matching of property names uses the same linear-time regex engine as
validation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import jsonschema_rs

from cards.findings import extend_pointer
from schemas_app.analysis import for_validation, resolve_pointer
from schemas_app.validation import (
    DEFAULT_DRAFT,
    DRAFT4,
    DRAFT6,
    DRAFT7,
    DRAFT2019,
    DRAFT2020,
    draft_of,
    meta_registry,
    pattern_options,
)

MAX_STEPS = 20_000
# The experimental containment check runs only on schemas up to this size (canonical chars).
SEMANTIC_MAX_CHARS = 16_384

COMPATIBLE_STRICT = frozenset(
    {
        "ID_CHANGED",
        "TITLE_CHANGED",
        "DESCRIPTION_CHANGED",
        "DEFAULT_CHANGED",
        "SCHEMA_REMOVED",
        "TYPE_EXTENDED",
        "SUM_TYPE_EXTENDED",
        "MAX_LENGTH_INCREASED",
        "MAX_LENGTH_REMOVED",
        "MIN_LENGTH_DECREASED",
        "MIN_LENGTH_REMOVED",
        "PATTERN_REMOVED",
        "FORMAT_REMOVED",
        "MAXIMUM_INCREASED",
        "MAXIMUM_REMOVED",
        "EXCLUSIVE_MAXIMUM_INCREASED",
        "EXCLUSIVE_MAXIMUM_REMOVED",
        "MINIMUM_DECREASED",
        "MINIMUM_REMOVED",
        "EXCLUSIVE_MINIMUM_DECREASED",
        "EXCLUSIVE_MINIMUM_REMOVED",
        "MULTIPLE_OF_REMOVED",
        "MULTIPLE_OF_REDUCED",
        "ENUM_ARRAY_EXTENDED",
        "ENUM_REMOVED",
        "REQUIRED_ATTRIBUTE_REMOVED",
        "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ADDITIONAL_PROPERTIES_ADDED",
        "ADDITIONAL_PROPERTIES_EXTENDED",
        "UNEVALUATED_PROPERTIES_ADDED",
        "UNEVALUATED_PROPERTIES_EXTENDED",
        "PATTERN_PROPERTY_ADDED_IS_COVERED",
        "PATTERN_PROPERTY_REMOVED_IS_COVERED",
        "MAX_PROPERTIES_INCREASED",
        "MAX_PROPERTIES_REMOVED",
        "MIN_PROPERTIES_DECREASED",
        "MIN_PROPERTIES_REMOVED",
        "DEPENDENCY_ARRAY_NARROWED",
        "DEPENDENCY_ARRAY_REMOVED",
        "DEPENDENCY_SCHEMA_REMOVED",
        "MAX_ITEMS_INCREASED",
        "MAX_ITEMS_REMOVED",
        "MIN_ITEMS_DECREASED",
        "MIN_ITEMS_REMOVED",
        "MAX_CONTAINS_INCREASED",
        "MAX_CONTAINS_REMOVED",
        "MIN_CONTAINS_DECREASED",
        "MIN_CONTAINS_REMOVED",
        "UNIQUE_ITEMS_REMOVED",
        "ADDITIONAL_ITEMS_ADDED",
        "ADDITIONAL_ITEMS_EXTENDED",
        "UNEVALUATED_ITEMS_ADDED",
        "UNEVALUATED_ITEMS_EXTENDED",
        "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
        "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PRODUCT_TYPE_NARROWED",
        "COMBINED_TYPE_EXTENDED",
        "NOT_TYPE_NARROWED",
        "NOT_TYPE_REMOVED",
        "CONDITIONAL_REMOVED",
        "REFERENCE_REMOVED",
    }
)
LENIENT_EXTRA = frozenset(
    {
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ADDITIONAL_PROPERTIES_REMOVED",
        "ADDITIONAL_PROPERTIES_NARROWED",
        "UNEVALUATED_PROPERTIES_REMOVED",
        "UNEVALUATED_PROPERTIES_NARROWED",
    }
)
COMPATIBLE_LENIENT = COMPATIBLE_STRICT | LENIENT_EXTRA
POLICIES = {"STRICT": COMPATIBLE_STRICT, "LENIENT": COMPATIBLE_LENIENT}

# Keywords that never change what validates.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$comment",
        "$vocabulary",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)
_FORMAT_ASSERTED = (DRAFT4, DRAFT6, DRAFT7)
_COMBINATORS = ("allOf", "anyOf", "oneOf")


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
    """The schemas are too intricate to compare within MAX_STEPS."""


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
    existing = bare.get("allOf") if isinstance(bare.get("allOf"), list) else []
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
    if isinstance(node.get("enum"), list):
        return node["enum"]
    return None


class _Diff:
    """One backward comparison (old -> new), collecting differences."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.out: list[Difference] = []

    def add(self, kind: str, pointer: str) -> None:
        self.out.append(Difference(kind, pointer or "/"))

    # -- entry points ----------------------------------------------------------------------

    def compatible(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> bool:
        """Whether new reads everything old accepted (sub-differences are kept when it does)."""
        sub = _Diff(self.ctx)
        sub.compare(old, new, so, sn, path)
        ok = all(d.type in COMPATIBLE_STRICT for d in sub.out)
        if ok:
            self.out.extend(sub.out)
        return ok

    def compare(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> None:
        self.ctx.tick()
        plain_old, plain_new = _unwrap(old, so), _unwrap(new, sn)
        keys = {(id(old), id(new)), (id(plain_old), id(plain_new))}
        if keys & self.ctx.visiting:
            return  # a recursive schema: assume the cycle is compatible (fixpoint)
        self.ctx.visiting.update(keys)
        try:
            self._compare(plain_old, plain_new, so, sn, path)
        finally:
            self.ctx.visiting.difference_update(keys)

    def sub(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> None:
        """A subschema that may be absent on either side (absent accepts everything)."""
        if old is None and new is None:
            return
        if new is None or _accepts_all(new, sn.draft):
            if old is not None and not _accepts_all(old, so.draft):
                self.add("SCHEMA_REMOVED", path)
            return
        self.compare(True if old is None else old, new, so, sn, path)

    # -- the comparison ----------------------------------------------------------------------

    def _compare(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            self._annotations(old, new, path)
        if _accepts_all(new, sn.draft) or old is False:
            return
        if new is False:
            self.add("SCHEMA_FALSE", path)
            return
        if _accepts_all(old, so.draft):
            self.add("SCHEMA_ADDED", path)
            return
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.add("TYPE_CHANGED", path)
            return
        if not self._combinators(old, new, so, sn, path):
            return  # decided by the combinator comparison
        if not self._type(old, new, path):
            return
        self._enum(old, new, path)
        self._string(old, new, so, sn, path)
        self._number(old, new, path)
        self._object(old, new, so, sn, path)
        self._array(old, new, so, sn, path)
        self._not(old, new, so, sn, path)
        self._conditional(old, new, so, sn, path)
        self._refs(old, new, path)

    def _annotations(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for key, kind in (
            ("$id", "ID_CHANGED"),
            ("id", "ID_CHANGED"),
            ("title", "TITLE_CHANGED"),
            ("description", "DESCRIPTION_CHANGED"),
            ("default", "DEFAULT_CHANGED"),
        ):
            if key in old and key in new and _canon(old[key]) != _canon(new[key]):
                self.add(kind, path)

    # combinators

    def _combinators(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> bool:
        """Compare allOf/anyOf/oneOf; False when that decided everything."""
        old_kinds = [k for k in _COMBINATORS if isinstance(old.get(k), list)]
        new_kinds = [k for k in _COMBINATORS if isinstance(new.get(k), list)]
        if not old_kinds and not new_kinds:
            return True
        if len(old_kinds) == 1 and len(new_kinds) == 1:
            self._combined(old_kinds[0], old, new_kinds[0], new, so, sn, path)
            return True
        if old_kinds and not new_kinds and len(old_kinds) == 1:
            self._combinator_removed(old_kinds[0], old, new, so, sn, path)
            return False
        if new_kinds and not old_kinds and len(new_kinds) == 1:
            self._combinator_added(new_kinds[0], old, new, so, sn, path)
            return False
        for kind in set(old_kinds) & set(new_kinds):
            self._combined(kind, old, kind, new, so, sn, path)
        if set(old_kinds) != set(new_kinds):
            self.add("COMBINED_TYPE_CHANGED", path)
        return True

    def _combinator_added(
        self, kind: str, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        """new = bare AND/OR branches: it reads old's data when old fits the bare part and
        every branch (allOf) or some branch (anyOf/oneOf)."""
        bare = {k: v for k, v in new.items() if k != kind}
        branches = new[kind]
        if kind == "allOf":
            ok = self.compatible(old, bare, so, sn, path) and all(
                self.compatible(old, b, so, sn, path) for b in branches
            )
            if not ok:
                self.add("PRODUCT_TYPE_EXTENDED", path)
            return
        for branch in branches:
            merged = _merge(bare, branch, sn)
            if merged is not None and self.compatible(old, merged, so, sn, path):
                self.add("SUM_TYPE_EXTENDED", path)
                return
            if merged is None and self.compatible(old, bare, so, sn, path):
                if self.compatible(old, branch, so, sn, path):
                    self.add("SUM_TYPE_EXTENDED", path)
                    return
        self.add("COMBINED_TYPE_CHANGED", path)

    def _combinator_removed(
        self, kind: str, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        """old = bare AND/OR branches, new has none: new must read every old instance."""
        bare = {k: v for k, v in old.items() if k != kind}
        branches = old[kind]
        if kind == "allOf":
            candidates = [bare, *branches]
            ok = any(self.compatible(c, new, so, sn, path) for c in candidates)
        else:
            merged = [_merge(bare, b, so) for b in branches]
            ok = all(
                self.compatible(m if m is not None else b, new, so, sn, path)
                for m, b in zip(merged, branches, strict=True)
            )
        if not ok:
            self.add("COMBINED_TYPE_CHANGED", path)

    def _combined(
        self,
        old_kind: str,
        old: dict[str, Any],
        new_kind: str,
        new: dict[str, Any],
        so: _Side,
        sn: _Side,
        path: str,
    ) -> None:
        olds = _dedupe(old[old_kind])
        news = _dedupe(new[new_kind])
        if old_kind != new_kind:
            extended = (
                new_kind == "anyOf"
                or (len(olds) == 1 and new_kind == "oneOf")
                or (len(olds) == 1 and len(news) == 1 and new_kind == "allOf")
            )
            if not extended:
                self.add("COMBINED_TYPE_CHANGED", path)
                return
            self.add("COMBINED_TYPE_EXTENDED", path)
        product = new_kind == "allOf"
        if len(olds) < len(news):
            self.add("PRODUCT_TYPE_EXTENDED" if product else "SUM_TYPE_EXTENDED", path)
        elif len(olds) > len(news):
            self.add("PRODUCT_TYPE_NARROWED" if product else "SUM_TYPE_NARROWED", path)
        pairs: dict[tuple[int, int], list[Difference]] = {}
        for i, o in enumerate(olds):
            for j, n in enumerate(news):
                sub = _Diff(self.ctx)
                sub.compare(o, n, so, sn, f"{path}/{new_kind}/{j}".replace("//", "/"))
                if all(d.type in COMPATIBLE_STRICT for d in sub.out):
                    pairs[(i, j)] = sub.out
        matching = _max_matching(len(olds), len(news), set(pairs))
        if len(matching) < min(len(olds), len(news)):
            self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)
            return
        for pair in sorted(matching.items()):
            self.out.extend(pairs[(pair[1], pair[0])])

    # type, enum

    def _type(self, old: dict[str, Any], new: dict[str, Any], path: str) -> bool:
        to, tn = _types(old), _types(new)
        if "type" not in new:
            return True
        if to is None:
            self.add("TYPE_NARROWED", path)
            return True
        tn = tn or set()
        if to == tn:
            return True
        if to <= tn:
            self.add("TYPE_EXTENDED" if to == {"integer"} else "SUM_TYPE_EXTENDED", path)
            return True
        if tn <= to and tn:
            narrowed = "number" in to and "number" not in tn and "integer" in tn
            self.add("TYPE_NARROWED" if narrowed else "SUM_TYPE_NARROWED", path)
            return True
        self.add("TYPE_CHANGED", path)
        return bool(to & tn)  # disjoint types: nothing else matters

    def _enum(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        eo, en = _enum(old), _enum(new)
        if en is None:
            if eo is not None:
                self.add("ENUM_REMOVED", path)
            return
        if eo is None:
            # old constrained to the same values by its type alone? (e.g. boolean -> [true, false])
            if _types(old) == {"boolean"} and {_canon(v) for v in en} >= {"true", "false"}:
                return
            self.add("ENUM_ADDED", path)
            return
        so_, sn_ = {_canon(v) for v in eo}, {_canon(v) for v in en}
        if so_ == sn_:
            return
        if so_ <= sn_:
            self.add("ENUM_ARRAY_EXTENDED", path)
        elif sn_ <= so_:
            self.add("ENUM_ARRAY_NARROWED", path)
        else:
            self.add("CONST_CHANGED" if "const" in new else "ENUM_ARRAY_CHANGED", path)

    # string

    def _string(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        self._bound(old.get("maxLength"), new.get("maxLength"), "MAX_LENGTH", "max", path)
        self._bound(old.get("minLength"), new.get("minLength"), "MIN_LENGTH", "min", path)
        po, pn = old.get("pattern"), new.get("pattern")
        if po != pn:
            if pn is None:
                self.add("PATTERN_REMOVED", extend_pointer(path, "pattern"))
            elif po is None:
                self.add("PATTERN_ADDED", extend_pointer(path, "pattern"))
            else:
                self.add("PATTERN_CHANGED", extend_pointer(path, "pattern"))
        if sn.draft in _FORMAT_ASSERTED or so.draft in _FORMAT_ASSERTED:
            fo = old.get("format") if so.draft in _FORMAT_ASSERTED else None
            fn = new.get("format") if sn.draft in _FORMAT_ASSERTED else None
            if fo != fn:
                where = extend_pointer(path, "format")
                if fn is None:
                    self.add("FORMAT_REMOVED", where)
                elif fo is None:
                    self.add("FORMAT_ADDED", where)
                else:
                    self.add("FORMAT_CHANGED", where)

    def _bound(self, vo: Any, vn: Any, name: str, side: str, path: str) -> None:
        if not _is_number(vo):
            vo = None
        if not _is_number(vn):
            vn = None
        if vo == vn:
            return
        where = extend_pointer(path, _keyword(name))
        if vn is None:
            self.add(f"{name}_REMOVED", where)
        elif vo is None:
            self.add(f"{name}_ADDED", where)
        elif (vn > vo) == (side == "max"):
            self.add(f"{name}_INCREASED" if side == "max" else f"{name}_DECREASED", where)
        else:
            self.add(f"{name}_DECREASED" if side == "max" else f"{name}_INCREASED", where)

    # number

    def _number(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for side in ("max", "min"):
            bo, bn = _numeric_bound(old, side), _numeric_bound(new, side)
            if bo == bn:
                continue
            exclusive = bn[1] if bn else bo[1] if bo else False
            name = ("EXCLUSIVE_" if exclusive else "") + ("MAXIMUM" if side == "max" else "MINIMUM")
            where = extend_pointer(path, _keyword(name))
            if bn is None:
                self.add(f"{name}_REMOVED", where)
            elif bo is None:
                self.add(f"{name}_ADDED", where)
            else:
                wider = bn[0] > bo[0] if side == "max" else bn[0] < bo[0]
                if bn[0] == bo[0]:
                    wider = bo[1] and not bn[1]
                grow = "INCREASED" if side == "max" else "DECREASED"
                shrink = "DECREASED" if side == "max" else "INCREASED"
                self.add(f"{name}_{grow if wider else shrink}", where)
        mo, mn = old.get("multipleOf"), new.get("multipleOf")
        if not (_is_number(mo) and mo > 0):
            mo = None
        if not (_is_number(mn) and mn > 0):
            mn = None
        if mo == mn:
            return
        where = extend_pointer(path, "multipleOf")
        if mn is None:
            self.add("MULTIPLE_OF_REMOVED", where)
        elif mo is None:
            self.add("MULTIPLE_OF_ADDED", where)
        else:
            fo, fn = Fraction(str(mo)), Fraction(str(mn))
            if (fo / fn).denominator == 1:
                self.add("MULTIPLE_OF_REDUCED", where)
            elif (fn / fo).denominator == 1:
                self.add("MULTIPLE_OF_EXPANDED", where)
            else:
                self.add("MULTIPLE_OF_CHANGED", where)

    # object

    def _object(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        po = old.get("properties") if isinstance(old.get("properties"), dict) else {}
        pn = new.get("properties") if isinstance(new.get("properties"), dict) else {}
        ro = (
            {r for r in old.get("required", []) if isinstance(r, str)}
            if isinstance(old.get("required"), list)
            else set()
        )
        rn = (
            {r for r in new.get("required", []) if isinstance(r, str)}
            if isinstance(new.get("required"), list)
            else set()
        )
        model_o, model_n = _model(old), _model(new)
        for name in pn:
            where = extend_pointer(path, "properties", name)
            if name in po:
                self.compare(po[name], pn[name], so, sn, where)
                continue
            required = name in rn
            default = isinstance(pn[name], dict) and "default" in pn[name]
            if model_o == "open":
                if _accepts_all(pn[name], sn.draft) and not required:
                    kind = "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                elif required and not default:
                    kind = "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
                elif required:
                    kind = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                else:
                    kind = "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
                self.add(kind, where)
                continue
            if model_o == "partial":
                before = self._effective(old, name, so)
                if before is not False:
                    covered = self.compatible(before, pn[name], so, sn, where)
                    self.add(
                        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                        if covered
                        else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                        where,
                    )
            if required and default:
                self.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
            elif required:
                self.add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
            else:
                self.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
        for name in po:
            if name in pn:
                continue
            where = extend_pointer(path, "properties", name)
            if model_n == "open":
                self.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
            elif model_n == "closed" or self._effective(new, name, sn) is False:
                if po[name] is False:
                    self.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
                else:
                    self.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
            else:
                after = self._effective(new, name, sn)
                covered = self.compatible(po[name], after, so, sn, where)
                self.add(
                    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                    if covered
                    else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                    where,
                )
        for name in sorted(rn - ro):
            if name in pn and name not in po:
                continue  # reported with the added property
            schema = pn.get(name)
            default = isinstance(schema, dict) and "default" in schema
            kind = (
                "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if default else "REQUIRED_ATTRIBUTE_ADDED"
            )
            self.add(kind, extend_pointer(path, "required", name))
        for name in sorted(ro - rn):
            self.add("REQUIRED_ATTRIBUTE_REMOVED", extend_pointer(path, "required", name))
        self._open_model(
            old.get("additionalProperties"),
            new.get("additionalProperties"),
            "ADDITIONAL_PROPERTIES",
            so,
            sn,
            extend_pointer(path, "additionalProperties"),
        )
        self._open_model(
            old.get("unevaluatedProperties"),
            new.get("unevaluatedProperties"),
            "UNEVALUATED_PROPERTIES",
            so,
            sn,
            extend_pointer(path, "unevaluatedProperties"),
        )
        self._pattern_properties(old, new, so, sn, path)
        self._bound(
            old.get("maxProperties"), new.get("maxProperties"), "MAX_PROPERTIES", "max", path
        )
        self._bound(
            old.get("minProperties"), new.get("minProperties"), "MIN_PROPERTIES", "min", path
        )
        self._dependencies(old, new, so, sn, path)
        self.sub(
            old.get("propertyNames"),
            new.get("propertyNames"),
            so,
            sn,
            extend_pointer(path, "propertyNames"),
        )

    def _effective(self, node: dict[str, Any], name: str, side: _Side) -> Any:
        """The schema ``node`` applies to a member ``name`` it does not list in properties."""
        patterns = node.get("patternProperties")
        matched = []
        if isinstance(patterns, dict):
            matched = [s for p, s in patterns.items() if self._matches(p, name)]
        if matched:
            return matched[0] if len(matched) == 1 else {"allOf": matched}
        extra = node.get("additionalProperties")
        if extra is None:
            return True
        return extra

    def _matches(self, pattern: str, name: str) -> bool:
        validator = self.ctx.patterns.get(pattern)
        if validator is None and pattern not in self.ctx.patterns:
            try:
                validator = jsonschema_rs.Draft202012Validator(
                    {"type": "string", "pattern": pattern},
                    offline=True,
                    pattern_options=pattern_options(),
                )
            except Exception:  # noqa: BLE001 - an invalid pattern matches nothing
                validator = None
            self.ctx.patterns[pattern] = validator
        return bool(validator is not None and validator.is_valid(name))

    def _open_model(self, vo: Any, vn: Any, name: str, so: _Side, sn: _Side, path: str) -> None:
        open_o = vo is None or _accepts_all(vo, so.draft)
        open_n = vn is None or _accepts_all(vn, sn.draft)
        if open_o and open_n:
            return
        if vo is False:
            if vn is not False:
                self.add(f"{name}_ADDED", path)
            return
        if vn is False:
            self.add(f"{name}_REMOVED", path)
            return
        if open_n:
            self.add(f"{name}_EXTENDED", path)
            return
        if open_o:
            self.add(f"{name}_NARROWED", path)
            return
        self.compare(vo, vn, so, sn, path)

    def _pattern_properties(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        po = old.get("patternProperties") if isinstance(old.get("patternProperties"), dict) else {}
        pn = new.get("patternProperties") if isinstance(new.get("patternProperties"), dict) else {}
        for pattern, schema in pn.items():
            where = extend_pointer(path, "patternProperties", pattern)
            if pattern in po:
                self.compare(po[pattern], schema, so, sn, where)
                continue
            before = old.get("additionalProperties", True)
            if before is False:
                self.add("PATTERN_PROPERTY_ADDED_IS_COVERED", where)
            elif self.compatible(before, schema, so, sn, where):
                self.add("PATTERN_PROPERTY_ADDED_IS_COVERED", where)
            else:
                self.add("PATTERN_PROPERTY_ADDED_NOT_COVERED", where)
        for pattern, schema in po.items():
            if pattern in pn:
                continue
            where = extend_pointer(path, "patternProperties", pattern)
            after = new.get("additionalProperties", True)
            if schema is False or (
                after is not False and self.compatible(schema, after, so, sn, where)
            ):
                self.add("PATTERN_PROPERTY_REMOVED_IS_COVERED", where)
            else:
                self.add("PATTERN_PROPERTY_REMOVED_NOT_COVERED", where)

    def _dependencies(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        arrays_o, schemas_o = _dependency_maps(old)
        arrays_n, schemas_n = _dependency_maps(new)
        for name in sorted(set(arrays_o) | set(arrays_n)):
            where = extend_pointer(path, "dependencies", name)
            lo, ln = arrays_o.get(name), arrays_n.get(name)
            if lo == ln:
                continue
            if ln is None:
                self.add("DEPENDENCY_ARRAY_REMOVED", where)
            elif lo is None:
                self.add("DEPENDENCY_ARRAY_ADDED", where)
            elif ln < lo:
                self.add("DEPENDENCY_ARRAY_NARROWED", where)
            elif ln > lo:
                self.add("DEPENDENCY_ARRAY_EXTENDED", where)
            else:
                self.add("DEPENDENCY_ARRAY_CHANGED", where)
        for name in sorted(set(schemas_o) | set(schemas_n)):
            where = extend_pointer(path, "dependencies", name)
            if name not in schemas_n:
                self.add("DEPENDENCY_SCHEMA_REMOVED", where)
            elif name not in schemas_o:
                self.add("DEPENDENCY_SCHEMA_ADDED", where)
            else:
                self.compare(schemas_o[name], schemas_n[name], so, sn, where)

    # array

    def _array(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        to, rest_o, rest_key_o = _tuple(old, so.draft)
        tn, rest_n, rest_key_n = _tuple(new, sn.draft)
        if to is None and tn is None:
            self.sub(rest_o, rest_n, so, sn, extend_pointer(path, "items"))
        else:
            to, tn = to or [], tn or []
            for index in range(max(len(to), len(tn))):
                where = extend_pointer(path, "items", index)
                if index < len(to) and index < len(tn):
                    self.compare(to[index], tn[index], so, sn, where)
                elif index < len(tn):
                    self._item_added(rest_o, tn[index], so, sn, where)
                else:
                    self._item_removed(to[index], rest_n, so, sn, where)
            self._open_model(
                rest_o, rest_n, "ADDITIONAL_ITEMS", so, sn, extend_pointer(path, rest_key_n)
            )
        self._open_model(
            old.get("unevaluatedItems"),
            new.get("unevaluatedItems"),
            "UNEVALUATED_ITEMS",
            so,
            sn,
            extend_pointer(path, "unevaluatedItems"),
        )
        for keyword, name, side in (
            ("maxItems", "MAX_ITEMS", "max"),
            ("minItems", "MIN_ITEMS", "min"),
            ("maxContains", "MAX_CONTAINS", "max"),
            ("minContains", "MIN_CONTAINS", "min"),
        ):
            self._bound(old.get(keyword), new.get(keyword), name, side, path)
        uo, un = old.get("uniqueItems") is True, new.get("uniqueItems") is True
        if uo and not un:
            self.add("UNIQUE_ITEMS_REMOVED", extend_pointer(path, "uniqueItems"))
        elif un and not uo:
            self.add("UNIQUE_ITEMS_ADDED", extend_pointer(path, "uniqueItems"))
        self.sub(old.get("contains"), new.get("contains"), so, sn, extend_pointer(path, "contains"))

    def _item_added(self, rest_o: Any, item: Any, so: _Side, sn: _Side, where: str) -> None:
        if rest_o is False:
            self.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", where)
        elif rest_o is None or _accepts_all(rest_o, so.draft):
            if _accepts_all(item, sn.draft):
                self.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", where)
            else:
                self.add("ITEM_ADDED_TO_OPEN_CONTENT_MODEL", where)
        elif self.compatible(rest_o, item, so, sn, where):
            self.add("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        else:
            self.add("ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)

    def _item_removed(self, item: Any, rest_n: Any, so: _Side, sn: _Side, where: str) -> None:
        if rest_n is None or _accepts_all(rest_n, sn.draft):
            self.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
        elif rest_n is False:
            if item is False:
                self.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
            else:
                self.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
        elif self.compatible(item, rest_n, so, sn, where):
            self.add("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        else:
            self.add("ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)

    # not, if/then/else, opaque references

    def _not(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        no, nn = old.get("not"), new.get("not")
        where = extend_pointer(path, "not")
        if no is None and nn is None:
            return
        if nn is None:
            self.add("NOT_TYPE_REMOVED", where)
        elif no is None:
            if nn is not False:
                self.add("NOT_TYPE_ADDED", where)
        elif _Diff(self.ctx).compatible(nn, no, sn, so, where):
            if _canon(no) != _canon(nn):
                self.add("NOT_TYPE_NARROWED", where)
        else:
            self.add("NOT_TYPE_EXTENDED", where)

    def _conditional(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        has_o = "if" in old and ("then" in old or "else" in old)
        has_n = "if" in new and ("then" in new or "else" in new)
        if not has_o and not has_n:
            return
        where = extend_pointer(path, "if")
        if not has_n:
            self.add("CONDITIONAL_REMOVED", where)
            return
        if not has_o:
            self.add("CONDITIONAL_ADDED", where)
            return
        if _canon(old["if"]) != _canon(new["if"]):
            both = _Diff(self.ctx).compatible(old["if"], new["if"], so, sn, where) and _Diff(
                self.ctx
            ).compatible(new["if"], old["if"], sn, so, where)
            if not both:
                self.add("CONDITION_CHANGED", where)
                return
        self.sub(old.get("then"), new.get("then"), so, sn, extend_pointer(path, "then"))
        self.sub(old.get("else"), new.get("else"), so, sn, extend_pointer(path, "else"))

    def _refs(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for key in ("$ref", "$dynamicRef", "$recursiveRef"):
            ro, rn = old.get(key), new.get(key)
            if ro == rn:
                continue
            where = extend_pointer(path, key)
            if rn is None:
                self.add("REFERENCE_REMOVED", where)
            elif ro is None:
                self.add("REFERENCE_ADDED", where)
            else:
                self.add("REFERENCE_CHANGED", where)


def _keyword(name: str) -> str:
    parts = name.lower().split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def _numeric_bound(node: dict[str, Any], side: str) -> tuple[float, bool] | None:
    """The tightest (value, exclusive) bound on one side, from both keyword forms."""
    inclusive = node.get("maximum" if side == "max" else "minimum")
    exclusive = node.get("exclusiveMaximum" if side == "max" else "exclusiveMinimum")
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


def _draft(schema: Any, fallback: str = DEFAULT_DRAFT) -> str:
    if isinstance(schema, dict):
        return draft_of(schema.get("$schema")) or fallback
    return fallback


def backward_diff(
    old: Any, new: Any, *, old_draft: str | None = None, new_draft: str | None = None
) -> list[Difference]:
    """Differences from ``old`` to ``new``, read backward (does ``new`` read ``old``'s data?).

    Raises :class:`BudgetExceeded` when the schemas are too intricate to compare.
    """
    so = _Side(old, old_draft or _draft(old))
    sn = _Side(new, new_draft or _draft(new))
    diff = _Diff(_Context())
    diff.compare(old, new, so, sn, "")
    return list(dict.fromkeys(diff.out))


def is_backward_compatible(old: Any, new: Any, policy: str = "STRICT") -> bool:
    allowed = POLICIES[policy]
    return all(d.type in allowed for d in backward_diff(old, new))


# --- verdicts ------------------------------------------------------------------------------


@dataclass
class Verdict:
    verdict: str  # compatible | breaking | unknown
    lenient_verdict: str
    reasons: list[dict[str, Any]]
    semantic: str = ""  # yes | no | unknown | "" (not computed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "lenient_verdict": self.lenient_verdict,
            "semantic": self.semantic,
            "reasons": self.reasons,
        }


_DRAFT_CONST = {
    DRAFT4: jsonschema_rs.Draft4,
    DRAFT6: jsonschema_rs.Draft6,
    DRAFT7: jsonschema_rs.Draft7,
    DRAFT2019: jsonschema_rs.Draft201909,
    DRAFT2020: jsonschema_rs.Draft202012,
}


def _semantic(reader: Any, writer: Any, draft: str) -> str:
    """jsonschema-rs's experimental containment check: does ``reader`` admit all ``writer`` does?"""
    try:
        options = {"draft": _DRAFT_CONST[draft], "offline": True, "registry": meta_registry()}
        a = jsonschema_rs.canonicalize(for_validation(reader, draft), **options)
        b = jsonschema_rs.canonicalize(for_validation(writer, draft), **options)
        answer = str(a.covers(b)).lower()
    except Exception:  # noqa: BLE001 - experimental; any failure means "no opinion"
        return "unknown"
    for word in ("yes", "no", "unknown"):
        if word in answer:
            return word
    return "unknown"


def classify(old: Any, new: Any, direction: str) -> Verdict:
    """The verdict on a named schema changing from ``old`` to ``new``.

    ``direction``: ``input`` (new must accept all old accepted), ``output`` (new must allow
    nothing old did not), ``both``, or ``unused`` (declared, named by no mode: checked both ways).
    """
    draft_o, draft_n = _draft(old), _draft(new)
    checks: list[tuple[str, Any, Any, str, str]] = []
    if direction in ("input", "both", "unused"):
        checks.append(("input", old, new, draft_o, draft_n))
    if direction in ("output", "both", "unused"):
        checks.append(("output", new, old, draft_n, draft_o))
    reasons: list[dict[str, Any]] = []
    strict_ok = lenient_ok = True
    try:
        for label, before, after, d_before, d_after in checks:
            for difference in backward_diff(before, after, old_draft=d_before, new_draft=d_after):
                item = difference.as_dict()
                item["direction"] = label
                reasons.append(item)
                strict_ok &= item["compatible"]
                lenient_ok &= item["lenient_compatible"]
    except BudgetExceeded:
        return Verdict(
            "unknown",
            "unknown",
            [{"type": "TOO_COMPLEX", "pointer": "/", "compatible": False, "direction": direction}],
        )
    semantic = ""
    small = len(_canon(old)) <= SEMANTIC_MAX_CHARS and len(_canon(new)) <= SEMANTIC_MAX_CHARS
    if draft_o == draft_n and small:
        answers = [_semantic(after, before, draft_o) for _, before, after, _, _ in checks]
        if all(a == "yes" for a in answers):
            semantic = "yes"
        elif any(a == "no" for a in answers):
            semantic = "no"
        else:
            semantic = "unknown"
    return Verdict(
        "compatible" if strict_ok else "breaking",
        "compatible" if lenient_ok else "breaking",
        reasons,
        semantic,
    )

"""Rules for object keywords: properties, required, content models, patternProperties,
dependencies."""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from registry.findings import extend_pointer
from schemas_app import regex_cost
from schemas_app.compat.base import _DiffBase
from schemas_app.compat.nodes import BudgetExceeded, _accepts_all, _dependency_maps, _model, _Side
from schemas_app.validation import pattern_options


class ObjectRules(_DiffBase):
    def _object(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        po: dict[str, Any] = old["properties"] if isinstance(old.get("properties"), dict) else {}
        pn: dict[str, Any] = new["properties"] if isinstance(new.get("properties"), dict) else {}
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
        self.ctx.check_budget()  # a backtracking pattern may cost the whole backtrack limit
        if regex_cost.excess(pattern, name) is not None:
            # One match on so long a name could cost seconds and cannot be stopped: the verdict
            # is unknown (TOO_COMPLEX) rather than a guess.
            raise BudgetExceeded
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

    def _pattern_properties(
        self, old: dict[str, Any], new: dict[str, Any], so: _Side, sn: _Side, path: str
    ) -> None:
        po: dict[str, Any] = (
            old["patternProperties"] if isinstance(old.get("patternProperties"), dict) else {}
        )
        pn: dict[str, Any] = (
            new["patternProperties"] if isinstance(new.get("patternProperties"), dict) else {}
        )
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

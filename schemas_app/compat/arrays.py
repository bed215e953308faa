"""Rules for array keywords: items, prefixItems, additionalItems, contains, bounds."""

from __future__ import annotations

from typing import Any

from registry.findings import extend_pointer
from schemas_app.compat.base import _DiffBase
from schemas_app.compat.nodes import _accepts_all, _Side, _tuple


class ArrayRules(_DiffBase):
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

"""Rules for type, enum/const, string and number keywords."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from registry.findings import extend_pointer
from schemas_app.compat.base import _DiffBase
from schemas_app.compat.kinds import _FORMAT_ASSERTED
from schemas_app.compat.nodes import (
    _canon,
    _enum,
    _is_number,
    _keyword,
    _numeric_bound,
    _Side,
    _types,
)


class ScalarRules(_DiffBase):
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
        mo: Any = old.get("multipleOf")
        mn: Any = new.get("multipleOf")
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

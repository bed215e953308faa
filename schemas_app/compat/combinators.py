"""Rules for allOf/anyOf/oneOf, not and if/then/else."""

from __future__ import annotations

from typing import Any

from registry.findings import extend_pointer
from schemas_app.compat.base import _DiffBase
from schemas_app.compat.kinds import _COMBINATORS, COMPATIBLE_STRICT
from schemas_app.compat.nodes import Difference, _canon, _dedupe, _max_matching, _merge, _Side


class CombinatorRules(_DiffBase):
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
                sub = type(self)(self.ctx)
                sub.compare(o, n, so, sn, f"{path}/{new_kind}/{j}".replace("//", "/"))
                if all(d.type in COMPATIBLE_STRICT for d in sub.out):
                    pairs[(i, j)] = sub.out
        matching = _max_matching(len(olds), len(news), set(pairs))
        if len(matching) < min(len(olds), len(news)):
            self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)
            return
        for pair in sorted(matching.items()):
            self.out.extend(pairs[(pair[1], pair[0])])

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
        elif type(self)(self.ctx).compatible(nn, no, sn, so, where):
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
            forward = type(self)(self.ctx).compatible(old["if"], new["if"], so, sn, where)
            both = forward and type(self)(self.ctx).compatible(new["if"], old["if"], sn, so, where)
            if not both:
                self.add("CONDITION_CHANGED", where)
                return
        self.sub(old.get("then"), new.get("then"), so, sn, extend_pointer(path, "then"))
        self.sub(old.get("else"), new.get("else"), so, sn, extend_pointer(path, "else"))

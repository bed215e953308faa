"""The comparison's core: entry points and shared rules, extended by one class per rule family."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from registry.findings import extend_pointer
from schemas_app.compat.kinds import COMPATIBLE_STRICT
from schemas_app.compat.nodes import (
    Difference,
    _accepts_all,
    _Context,
    _is_number,
    _keyword,
    _Side,
    _unwrap,
)


class _DiffBase(ABC):
    """One backward comparison (old -> new), collecting differences: the entry points every
    rule family calls, and the rules shared by object and array keywords."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.out: list[Difference] = []

    def add(self, kind: str, pointer: str) -> None:
        self.out.append(Difference(kind, pointer or "/"))

    def compatible(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> bool:
        """Whether new reads everything old accepted (sub-differences are kept when it does)."""
        sub = type(self)(self.ctx)
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

    @abstractmethod
    def _compare(self, old: Any, new: Any, so: _Side, sn: _Side, path: str) -> None:
        """Compare two unwrapped nodes (the class that combines the rule families)."""

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

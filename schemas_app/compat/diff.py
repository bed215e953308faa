"""``backward_diff``: walk two schemas in parallel and collect the typed differences."""

from __future__ import annotations

from typing import Any

from registry.findings import extend_pointer
from schemas_app.compat.arrays import ArrayRules
from schemas_app.compat.combinators import CombinatorRules
from schemas_app.compat.kinds import POLICIES
from schemas_app.compat.nodes import Difference, _accepts_all, _canon, _Context, _Side
from schemas_app.compat.objects import ObjectRules
from schemas_app.compat.scalars import ScalarRules
from schemas_app.validation import DEFAULT_DRAFT, draft_of


class _Diff(CombinatorRules, ScalarRules, ObjectRules, ArrayRules):
    """One backward comparison (old -> new): every rule family, in the order they apply."""

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

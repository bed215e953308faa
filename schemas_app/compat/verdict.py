"""``classify``: the verdict on a named schema changing, both policies and the semantic check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from schemas_app import budget
from schemas_app.analysis import for_validation
from schemas_app.compat.diff import _draft, backward_diff
from schemas_app.compat.kinds import SEMANTIC_MAX_CHARS
from schemas_app.compat.nodes import BudgetExceeded, _canon
from schemas_app.validation import DRAFT4, DRAFT6, DRAFT7, DRAFT2019, DRAFT2020, meta_registry


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
        options: dict[str, Any] = {
            "draft": _DRAFT_CONST[draft],
            "offline": True,
            "registry": meta_registry(),
        }
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
        spending = budget.current()
        if spending is not None and spending.over():
            raise BudgetExceeded
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
    spending = budget.current()
    if spending is not None and spending.over():
        small = False  # no second opinion once the task's schema budget is spent
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

"""Printing what the registry concluded: validation findings and live-check verdicts."""

from __future__ import annotations

from typing import Any

from a2a_registry_cli.session import Session

LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


def findings_of(validation: Any) -> list[dict[str, Any]]:
    rows = validation.get("findings") if isinstance(validation, dict) else None
    return [row for row in rows or [] if isinstance(row, dict)]


def has_errors(validation: Any) -> bool:
    if isinstance(validation, dict) and validation.get("valid") is False:
        return True
    return any(row.get("severity") == "error" for row in findings_of(validation))


def print_findings(session: Session, validation: Any) -> None:
    """One line per finding: level, code, JSON pointer, message; errors first."""
    rows = sorted(findings_of(validation), key=lambda r: LEVEL_ORDER.get(str(r.get("severity")), 3))
    counts = validation.get("counts") if isinstance(validation, dict) else None
    if not rows:
        session.say("No findings: the card is valid.")
        return
    if isinstance(counts, dict):
        summary = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("error", "warning", "info"))
        session.say(f"Findings ({summary}):")
    for row in rows:
        pointer = row.get("pointer") or "/"
        level = str(row.get("severity", "?"))
        session.say(f"  {level:<7} {row.get('code', '?')}  at {pointer}: {row.get('message', '')}")
    total = validation.get("findings_total") if isinstance(validation, dict) else None
    if isinstance(total, int) and total > len(rows):
        session.say(f"  ... {total - len(rows)} more (run `a2a-registry validate <card URL>`)")


def print_live(session: Session, live: Any) -> None:
    """The live verdict and the checks that did not pass (all of them when it passed)."""
    if not isinstance(live, dict):
        session.say("Live checks: none reported.")
        return
    outcome = live.get("outcome", "not-checked")
    counts = live.get("counts")
    line = f"Live checks: {outcome}"
    if live.get("checked_at"):
        line += f" (checked {live['checked_at']})"
    if isinstance(counts, dict) and counts:
        line += " - " + ", ".join(f"{v} {k}" for k, v in counts.items())
    session.say(line)
    checks = [c for c in live.get("checks") or [] if isinstance(c, dict)]
    shown = [c for c in checks if c.get("outcome") in ("fail", "warn")] or checks
    for check in shown:
        where = check.get("interface") or ""
        session.say(
            f"  {check.get('outcome', '?'):<5} {check.get('id', '?')} {check.get('level', '')}"
            f" {where}: {check.get('detail') or check.get('title') or ''}".rstrip()
        )

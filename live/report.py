"""What one run of the live checks found, and how it reads next to the run before."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from live.exchange import Exchange

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
MUST, SHOULD = "MUST", "SHOULD"
# A row about the registry itself (a limit of its own, an interface it did not check).
REGISTRY = "REGISTRY"
# The agent's overall outcome.
OVERALL_PASS, OVERALL_FAIL, NOT_CHECKED = "pass", "fail", "not-checked"
# What the endpoint did, for health (docs/live-checks.md, "Health").
ANSWERS, NOT_A2A, UNREACHABLE = "answers", "not-a2a", "unreachable"


@dataclass
class Check:
    id: str
    title: str
    level: str
    outcome: str
    detail: str
    interface: str | None = None
    exchange: Exchange | None = None
    skill: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "level": self.level,
            "outcome": self.outcome,
            "detail": self.detail,
            "interface": self.interface,
            "skill": self.skill,
            "exchange": self.exchange.as_dict() if self.exchange else None,
        }


@dataclass
class Run:
    checks: list[Check] = field(default_factory=list)
    endpoint: str = "not-checked"
    messages_sent: int = 0

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def outcome(self) -> str:
        """fail when a check failed; pass when the agent's endpoint was checked and nothing
        failed; not-checked when the endpoint was never judged (every interface skipped, a card
        that requires authentication, only gRPC...), whatever the card URL's headers said."""
        outcomes = {c.outcome for c in self.checks}
        if FAIL in outcomes:
            return OVERALL_FAIL
        if self.endpoint == NOT_CHECKED:
            return NOT_CHECKED
        if outcomes & {PASS, WARN}:
            return OVERALL_PASS
        return NOT_CHECKED


def since_of(
    checks: list[dict[str, Any]], previous: dict[str, Any] | None, now: str
) -> list[dict[str, Any]]:
    """Each check's ``since``: when its outcome began (kept from the previous report while the
    outcome stays the same), so a page can say since when a check fails."""
    before: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    for item in (previous or {}).get("checks") or []:
        if isinstance(item, dict):
            before[(item.get("id"), item.get("interface"), item.get("skill"))] = item
    out = []
    for item in checks:
        old = before.get((item["id"], item["interface"], item.get("skill")))
        same = old is not None and old.get("outcome") == item["outcome"]
        out.append({**item, "since": old.get("since", now) if same and old else now})
    return out


def counts(checks: list[dict[str, Any]]) -> dict[str, int]:
    tally = {PASS: 0, WARN: 0, FAIL: 0, SKIP: 0}
    for item in checks:
        tally[item["outcome"]] = tally.get(item["outcome"], 0) + 1
    return tally

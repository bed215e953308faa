"""A ranked agent and what it says about its rank: its score, whether the ranking is confident,
the skill that matched, and whether a person would pick it at all.

Every door that ranks answers with these (docs/search.md): the REST list appends :meth:`Match.why`
to each stored summary (:meth:`Match.explained`), ARD, MCP and A2A add it to their items, and
the catalogue collapses the weak matches (:attr:`Match.weak`) after the others.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

CONFIDENT = 50  # a score from which the ranking is confident the agent serves the need
# A ranked match under this score is one a person would not pick: a row in a collapsed
# "N weaker matches" list after the others, not a row of its own (the API keeps every match).
# On the demo agents, each need an agent serves scores that agent 56 to 100, and agents
# unrelated to a need score 1 to 5 (17 at most in issue 39's report), so 20 sits between
# noise and near misses (docs/catalogue.md, "Weaker matches").
WEAK_SCORE = 20


class Match(tuple[uuid.UUID, int]):
    """A ranked agent: ``(id, score)`` (so ``pk, score = match`` works), with ``confident``
    and ``matched_skill`` (the name of its skill closest to the need, or None)."""

    confident: bool
    matched_skill: str | None
    skill_position: int

    def __new__(cls, pk: uuid.UUID, score: int, skill_position: int = -1) -> Match:
        made = super().__new__(cls, (pk, score))
        made.confident = score >= CONFIDENT
        made.matched_skill = None
        made.skill_position = skill_position
        return made

    @property
    def id(self) -> uuid.UUID:
        return self[0]

    @property
    def score(self) -> int:
        return self[1]

    @property
    def weak(self) -> bool:
        """A match a person would not pick: under :data:`WEAK_SCORE`, and not confident."""
        return self.score < WEAK_SCORE and not self.confident

    def why(self) -> dict[str, Any]:
        """What a result says about its rank."""
        return {
            "score": self.score,
            "confident": self.confident,
            "matched_skill": self.matched_skill,
        }

    def why_json(self) -> str:
        """:meth:`why` as JSON members, to append to a JSON object's text (written directly:
        one ``json.dumps`` for the skill's name instead of six a result)."""
        name = self.matched_skill
        return (
            f'"score":{int(self.score)},"confident":{"true" if self.confident else "false"},'
            f'"matched_skill":{"null" if name is None else json.dumps(name)}'
        )

    def explained(self, document: str) -> str:
        """``document``, the text of a JSON object (a stored summary), with :meth:`why`'s
        members appended."""
        return document[:-1] + "," + self.why_json() + "}"

"""Natural-language search: agents ranked by how well they serve a need said in words.

Recall first (docs/search.md): every agent above a low noise floor is ranked, none is hidden by
a cutoff. Each result says why and how sure:

- its ``score`` (0 to 100), a calibrated estimate, in percent, that the agent serves the need;
  ``confident`` when it is at least :data:`CONFIDENT` (50);
- ``matched_skill``: the name of its skill closest to the need.

The score fuses two signals: the best cosine between the need's embedding and the agent's
vectors (its whole text's and each skill's: max pooling, search/index/), each row's cosine
less a share of that row's hubness ``r`` (how close it sits to needs in general:
search/embedding/hubs.py), and the share ``l`` of the need's telling words (stemmed; generic ones
such as "agent" left out: search/lexical.py) in the agent's text, less a share of the agent's
hubness ``h``:
``c = max over rows (cos - ROW_HUB_WEIGHT * (r - HUB_CENTER))``,
``s = c - HUB_WEIGHT * (h - HUB_CENTER) + LEX_WEIGHT * l``, then
``score = 100 * sigmoid((s - MID) / WIDTH)``. Agents
with ``s`` under :data:`FLOOR` are noise and never listed, unless their text has every telling
word of the need. Callers who want silence pass
``min_score``. Without the model (not installed, ``REGISTRY_EMBEDDINGS=off``) the score is the
lexical part alone: ``100 * l``, confident from 50.

Every function takes ``agents``, already narrowed by the visibility gate and the filters, and
only ever intersects with it.
"""

from __future__ import annotations

import math
import uuid

import numpy as np
from django.db import connection
from django.db.models import QuerySet

from cards.models import Agent, Skill
from registry.compiled import prepared_cursor, uuid_array
from search.embedding import hubs, model
from search.index import vectors
from search.lexical import word_shares
from search.matches import CONFIDENT, Match
from search.request_frame import need_of

__all__ = ["CONFIDENT", "Match", "matched_ids", "rank", "semantic_available"]

# Chosen on the tuning halves of bench/queries/ (docs/search.md, "Quality"); never on held-out.
FLOOR = 0.12  # fused similarity under which an agent is noise (nearest-neighbour candidates too)
MID = 0.33  # the fused similarity scored 50 (most near-miss needs stay under it)
WIDTH = 0.04  # how fast the score rises around MID
LEX_WEIGHT = 0.1
HUB_WEIGHT = 0.3  # the share of an agent's hubness taken off its cosine (search/embedding/hubs.py)
ROW_HUB_WEIGHT = 0.3  # ... and of each row's own hubness, off that row's cosine
HUB_CENTER = 0.19  # ... from this hubness on (the corpus cards' mean); under it, a small gain
NEAREST_MIN = 100  # vector candidates asked for a page (more for deep pages)
NEAREST_ALL = 2000  # ... and for matched_ids (facets)
LEXICAL_CANDIDATES = 100
SCAN_MAX = 20000  # a filtered set this small is scanned exactly


def semantic_available() -> bool:
    """Whether needs are matched by meaning here (else the ranking is lexical)."""
    return model.available()


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _query_vector(text: str) -> np.ndarray | None:
    if not semantic_available():
        return None
    try:
        return model.embed_query(text)
    except model.Unavailable:
        return None


# --- fusion ----------------------------------------------------------------------------------


class _Ranked:
    """The agents found for a need, scored: ``ids`` with their ``scores`` (0 to 100) and best
    skills' positions, and ``order``, the positions of those listed, best first."""

    def __init__(
        self, ids: list[uuid.UUID], scores: np.ndarray, skills: np.ndarray, order: np.ndarray
    ) -> None:
        self.ids, self.scores, self.skills, self.order = ids, scores, skills, order

    def listed(self, min_score: int) -> np.ndarray:
        """The positions listed with at least ``min_score``, best first."""
        return self.order[self.scores[self.order] >= min_score] if min_score else self.order

    def page(self, min_score: int, offset: int, limit: int) -> list[Match]:
        """The matches from ``offset``, at most ``limit`` (built for the page only)."""
        at = self.listed(min_score)[offset : offset + limit].tolist()
        return [Match(self.ids[i], int(self.scores[i]), int(self.skills[i])) for i in at]


def _ranked(
    ids: list[uuid.UUID],
    scores: np.ndarray,
    fused: np.ndarray,
    skills: np.ndarray,
    kept: np.ndarray,
) -> _Ranked:
    """The agents at ``kept`` (a mask) ordered by score, then fused similarity, then id (as the
    text of ids sorts: exact ties are duplicate cards)."""
    at = np.flatnonzero(kept)
    order = at[np.lexsort((-fused[at], -scores[at]))]
    if len(order) > 1:
        ordered_scores, ordered_fused = scores[order], fused[order]
        tied = (ordered_scores[1:] == ordered_scores[:-1]) & (
            ordered_fused[1:] == ordered_fused[:-1]
        )
        if tied.any():
            order = np.asarray(
                sorted(order.tolist(), key=lambda i: (-scores[i], -fused[i], ids[i].int)),
                dtype=np.int64,
            )
    return _Ranked(ids, scores, skills, order)


def _percent(values: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(100 * values), 0, 100).astype(np.int64)


def _calibrated(fused: np.ndarray) -> np.ndarray:
    """The fused similarity as a score: ``100 * sigmoid((fused - MID) / WIDTH)``."""
    return _percent(1 / (1 + np.exp(-(fused - MID) / WIDTH)))


_NONE = _Ranked([], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _beyond_the_nearest(
    query: np.ndarray,
    agents: QuerySet[Agent],
    index: vectors.VectorIndex,
    depth: int,
    share: float,
) -> set[uuid.UUID]:
    """More candidates where the filters left out most of the nearest agents (they kept
    ``share`` of them): every agent they keep, scored exactly, when they keep at most
    :data:`SCAN_MAX` (counted by PostgreSQL: no id is read for a larger set); otherwise the
    graph asked for as many more as that share says (at most :data:`NEAREST_ALL`)."""
    share = max(share, 1 / depth)
    if share * len(index) <= SCAN_MAX and agents.order_by()[: SCAN_MAX + 1].count() <= SCAN_MAX:
        exact = index.similarities(query, agents.values_list("pk", flat=True).order_by())
        return {pk for pk, cos in exact.items() if cos >= FLOOR - LEX_WEIGHT}
    wider = min(math.ceil(depth / share), max(NEAREST_ALL, depth))
    if wider <= depth:  # matched_ids asked for as many already: nothing more to look at
        return set()
    return set(index.candidates(query, wider, floor=FLOOR - LEX_WEIGHT))


def _scored(text: str, agents: QuerySet[Agent], *, depth: int) -> _Ranked:
    """Every agent of ``agents`` found for ``text`` above the floor, scored and ordered."""
    text = " ".join(text.split())
    if not text:
        return _NONE
    query = _query_vector(need_of(text))
    if query is None:
        lexical = word_shares(text, agents, None, max(depth, LEXICAL_CANDIDATES), every=False)
        ids = list(lexical)
        lex = np.fromiter(lexical.values(), dtype=np.float64, count=len(ids))
        no_skill = np.full(len(ids), -1, dtype=np.int64)
        return _ranked(ids, _percent(lex), lex, no_skill, lex > 0)
    index = vectors.index()
    near = index.candidates(query, depth, floor=FLOOR - LEX_WEIGHT)
    # The nearest agents the filters keep and the best having every telling word, one query.
    lexical = word_shares(text, agents, near, LEXICAL_CANDIDATES)
    kept_near = sum(1 for pk in near if pk in lexical)
    if len(near) >= depth and kept_near < len(near) / 2:
        extra = _beyond_the_nearest(query, agents, index, depth, kept_near / len(near))
        extra -= set(lexical)
        if extra:
            lexical.update(word_shares(text, agents, extra, 0))
    refs = hubs.references() if HUB_WEIGHT or ROW_HUB_WEIGHT else None
    ids = list(lexical)
    lex = np.fromiter(lexical.values(), dtype=np.float64, count=len(ids))
    cos, skill, hub, has = index.scores(
        query, ids, refs, row_weight=ROW_HUB_WEIGHT, center=HUB_CENTER
    )
    # An agent without a vector yet (not embedded) is judged by its words alone.
    fused = np.where(has, (cos - HUB_WEIGHT * (hub - HUB_CENTER)) + LEX_WEIGHT * lex, lex)
    scores = np.where(has, _calibrated(fused), _percent(lex))
    # The floor drops noise, never an agent that has every telling word of the need: where
    # words are shared, the lexical side still finds it (ranked by its score, low or not).
    kept = np.where(has, (fused >= FLOOR) | (lex >= 1.0), lex > 0)
    return _ranked(ids, scores, fused, np.where(has, skill, -1), kept)


def _named(found: list[Match]) -> list[Match]:
    """Fill in ``matched_skill`` (one query, for a page)."""
    wanted = {m[0] for m in found}
    if not wanted:
        return found
    names: dict[uuid.UUID, list[str]] = {}
    if _postgres():  # one array parameter (see uuid_array), prepared once per connection
        with prepared_cursor(connection) as cursor:
            cursor.execute(
                "SELECT agent_id, name, skill_id FROM cards_skill"
                " WHERE agent_id = ANY(%s::uuid[]) ORDER BY agent_id, position",
                [uuid_array(wanted)],
            )
            rows = cursor.fetchall()
    else:
        rows = list(
            Skill.objects.filter(agent_id__in=wanted)
            .order_by("agent_id", "position")
            .values_list("agent_id", "name", "skill_id")
        )
    for agent_id, name, skill_id in rows:
        names.setdefault(agent_id, []).append(name or skill_id)
    for match in found:
        own = names.get(match[0], [])
        if own:
            # The skill whose vector is closest; the first skill where that is unknown (lexical).
            at = match.skill_position if 0 <= match.skill_position < len(own) else 0
            match.matched_skill = own[at]
    return found


def rank(
    text: str,
    agents: QuerySet[Agent],
    *,
    limit: int,
    offset: int = 0,
    min_score: int = 0,
) -> list[Match]:
    """The agents of ``agents`` serving ``text``, best first, from ``offset``, at most
    ``limit``: every one above the noise floor, or scoring at least ``min_score``."""
    depth = max(NEAREST_MIN, 3 * (offset + limit))
    return _named(_scored(text, agents, depth=depth).page(min_score, offset, limit))


def matched_ids(text: str, agents: QuerySet[Agent], *, min_score: int = 0) -> list[uuid.UUID]:
    """Every agent of ``agents`` that :func:`rank` would list (for facet counts)."""
    ranked = _scored(text, agents, depth=NEAREST_ALL)
    return [ranked.ids[i] for i in ranked.listed(min_score).tolist()]

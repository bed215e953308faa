"""Natural-language search: agents ranked by how well they serve a need said in words.

The score (0 to 100) fuses two signals (docs/search.md):

- the cosine between the need's embedding and the agent's (cards/embedding/), mapped linearly
  from :data:`COS_LOW` (0) to :data:`COS_HIGH` (1);
- the words:
  the share of the need's telling words (stemmed; generic ones such as "agent" left out) that
  the agent's text has.

``score = 100 * (v + (1 - v) * LEX_WEIGHT * l)``: meaning decides, shared words raise it. One
cutoff, ``REGISTRY_SEMANTIC_CUTOFF``, is applied everywhere (search, explore, facets), so a need
no agent serves returns nothing instead of the nearest noise. Without the model (not installed,
``REGISTRY_EMBEDDINGS=off``) the score is the lexical part alone: ``100 * l``.

Every function takes ``agents``, already narrowed by the visibility gate and the filters, and
only ever intersects with it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from cards.embedding import model, vectors
from cards.models import Agent

COS_LOW = 0.15
COS_HIGH = 0.55
LEX_WEIGHT = 0.6
NEAREST_MIN = 100  # vector candidates asked for a page (more for deep pages)
NEAREST_ALL = 2000  # ... and for matched_ids (facets)
LEXICAL_CANDIDATES = 100
SCAN_MAX = 20000  # a filtered set this small is scanned exactly

_WORD = re.compile(r"[^\W_]{2,}")
# Words that say nothing about the need in a registry of agents (every card has them).
_GENERIC = frozenset(
    "a an the and or for with that this from into what who how can any are you your me my "
    "i need want find please some something someone agent agents ai assistant bot service "
    "tool help".split()
)


def semantic_available() -> bool:
    """Whether needs are matched by meaning here (else the ranking is lexical)."""
    return model.available()


def cutoff() -> int:
    return int(settings.REGISTRY_SEMANTIC_CUTOFF)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _query_vector(text: str) -> np.ndarray | None:
    if not semantic_available():
        return None
    try:
        return model.embed_query(text)
    except model.Unavailable:
        return None


# --- the lexical part ------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w for w in dict.fromkeys(_WORD.findall(text.lower())) if w not in _GENERIC]


def _lexemes(text: str) -> list[str]:
    """The need's telling words as PostgreSQL lexemes (English stemming, stop words out)."""
    words = _words(text)
    if not words:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector('english'::regconfig, %s))", [" ".join(words)]
        )
        row = cursor.fetchone()
    return [lexeme for lexeme in (row[0] if row else []) if "'" not in lexeme][:12]


def _lexical(
    text: str,
    agents: QuerySet[Agent],
    ids: Iterable[uuid.UUID] | None,
    limit: int,
    *,
    every: bool = True,
) -> dict[uuid.UUID, float]:
    """The share (0..1) of the need's telling words each agent's text has: of the agents of
    ``ids`` when given, else of the best ``limit`` agents having every word (``every``) or any.
    """
    if _postgres():
        lexemes = _lexemes(text)
        if not lexemes:
            return {}
        terms = [f"'{lexeme}'" for lexeme in lexemes]
        rows = agents
        if ids is not None:
            rows = rows.filter(pk__in=list(ids))
        else:
            joined = (" & " if every else " | ").join(terms)
            rows = rows.extra(  # noqa: S610 - bound parameter, the GIN index on search_vector
                where=["cards_agent.search_vector @@ %s::tsquery"], params=[joined]
            )
        share = " + ".join(["(cards_agent.search_vector @@ %s::tsquery)::int"] * len(terms))
        ranked = rows.annotate(lex=RawSQL(f"({share})::float / {len(terms)}", terms))
        if ids is None:
            ranked = ranked.order_by("-lex", "pk")[:limit]
        return {pk: float(lex or 0.0) for pk, lex in ranked.values_list("pk", "lex")}
    words = _words(text)
    if not words:
        return {}
    rows = agents
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    else:
        anyword = Q()
        for word in words[:10]:
            anyword |= Q(search_text__icontains=word)
        rows = rows.filter(anyword)[: limit * 5]
    out: dict[uuid.UUID, float] = {}
    for pk, body in rows.values_list("pk", "search_text"):
        body = (body or "").lower()
        out[pk] = sum(1 for w in words if w in body) / len(words)
    if ids is None and every:
        out = {pk: share for pk, share in out.items() if share >= 1.0}
    return out


# --- fusion ----------------------------------------------------------------------------------


def _fuse(cos: float | None, lex: float) -> float:
    if cos is None:
        return lex
    v = min(1.0, max(0.0, (cos - COS_LOW) / (COS_HIGH - COS_LOW)))
    return v + (1.0 - v) * LEX_WEIGHT * lex


def _scored(text: str, agents: QuerySet[Agent], *, depth: int) -> list[tuple[uuid.UUID, float]]:
    """Every agent of ``agents`` found for ``text`` with its fused score (0..1), best first."""
    text = " ".join(text.split())
    if not text:
        return []
    query = _query_vector(text)
    if query is None:
        lexical = _lexical(text, agents, None, max(depth, LEXICAL_CANDIDATES), every=False)
        return sorted(lexical.items(), key=lambda item: (-item[1], str(item[0])))
    index = vectors.index()
    near = index.nearest(query, depth)
    cosines = {pk: cos for pk, cos in near if cos >= COS_LOW}
    lexical_first = _lexical(text, agents, None, LEXICAL_CANDIDATES)
    candidates = set(cosines) | set(lexical_first)
    lexical = _lexical(text, agents, candidates, 0) if candidates else {}
    kept_near = sum(1 for pk in cosines if pk in lexical)
    if len(near) >= depth and kept_near < len(cosines) / 2:
        # The filters left out most of the nearest agents: look at every agent they keep, if
        # they are few enough for an exact scan.
        narrowed = list(agents.values_list("pk", flat=True)[: SCAN_MAX + 1])
        if len(narrowed) <= SCAN_MAX:
            exact = index.similarities(query, narrowed)
            cosines = {pk: cos for pk, cos in exact.items() if cos >= COS_LOW}
            extra = set(cosines) - set(lexical)
            if extra:
                lexical.update(_lexical(text, agents, extra, 0))
    missing = [pk for pk in lexical if pk not in cosines]
    if missing:
        cosines.update(index.similarities(query, missing))
    scored = [(pk, _fuse(cosines.get(pk, 0.0), lex)) for pk, lex in lexical.items()]
    return sorted(scored, key=lambda item: (-item[1], str(item[0])))


def _score(value: float) -> int:
    return max(0, min(100, round(value * 100)))


def rank(
    text: str, agents: QuerySet[Agent], *, limit: int, offset: int = 0
) -> list[tuple[uuid.UUID, int]]:
    """The agents of ``agents`` scoring at least the cutoff for ``text``, best first, as
    (id, score 0..100), from ``offset``, at most ``limit``."""
    depth = max(NEAREST_MIN, 3 * (offset + limit))
    floor = cutoff()
    found = [(pk, _score(s)) for pk, s in _scored(text, agents, depth=depth)]
    found = [(pk, score) for pk, score in found if score >= floor]
    return found[offset : offset + limit]


def matched_ids(text: str, agents: QuerySet[Agent]) -> list[uuid.UUID]:
    """Every agent of ``agents`` at or above the same cutoff (for facet counts)."""
    floor = cutoff()
    return [pk for pk, s in _scored(text, agents, depth=NEAREST_ALL) if _score(s) >= floor]

"""The lexical part of the ranking: the share of a need's telling words an agent's text has.

A need's telling words are its words less the generic ones every card has ("agent", "find",
"help"...); on PostgreSQL they are stemmed into English lexemes and matched against the stored
``search_vector`` (its GIN index), on SQLite as substrings of ``search_text``. The share is
what :mod:`search.semantic` fuses with the cosine (its ``l``), and the whole score where the
model is not available. Every function takes ``agents``, already narrowed by the visibility
gate and the filters, and only ever intersects with it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from cards.models import Agent
from registry.compiled import among, prepared_cursor, uuid_array

_WORD = re.compile(r"[^\W_]{2,}")
# Words that say nothing about the need in a registry of agents (every card has them).
_GENERIC = frozenset(
    "a an the and or for with that this from into what who how can any are you your me my "
    "i need want find please some something someone agent agents ai assistant bot service "
    "tool help give tell show get make let know like".split()
)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _among(agents: QuerySet[Agent], ids: list[uuid.UUID]) -> QuerySet[Agent]:
    """The agents of ``agents`` whose id is one of ``ids`` (one array parameter on
    PostgreSQL)."""
    if not _postgres():
        return agents.filter(pk__in=ids)
    return among(agents, ids)


def _words(text: str) -> list[str]:
    return [w for w in dict.fromkeys(_WORD.findall(text.lower())) if w not in _GENERIC]


def _lexemes(text: str) -> tuple[str, ...]:
    """The need's telling words as PostgreSQL lexemes (English stemming, stop words out)."""
    words = _words(text)
    return _stemmed(" ".join(words)) if words else ()


@lru_cache(maxsize=4096)
def _stemmed(words: str) -> tuple[str, ...]:
    """PostgreSQL's English lexemes of ``words`` (kept per process: the same need is asked
    again, and the stemming never changes); the statement is prepared once per connection."""
    with prepared_cursor(connection) as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english'::regconfig, %s))", [words])
        row = cursor.fetchone()
    return tuple(lexeme for lexeme in (row[0] if row else []) if "'" not in lexeme)[:12]


def _share_sql(count: int) -> str:
    """SQL for the share of ``count`` tsquery parameters an agent's text matches."""
    share = " + ".join(['("cards_agent"."search_vector" @@ %s::tsquery)::int'] * count)
    return f"(({share})::float / {count})"


def _condition_of(agents: QuerySet[Agent]) -> tuple[str | None, list[Any]] | None:
    """The WHERE condition of ``agents`` (the visibility gate and the filters) as SQL over the
    ``cards_agent`` table alone, compiled once for the whole lexical query: ``(None, [])`` when
    it keeps no agent, and None when ``agents`` is more than a condition on that table (joins,
    annotations, slices: then Django builds the query)."""
    query = agents.query
    # A condition on a foreign key's column (the gate's ``latest_snapshot__isnull=False``)
    # leaves the related table in ``alias_map`` with no reference: Django's FROM clause skips
    # such an alias (a trimmed join), and so does this test.
    joined = [alias for alias, refs in query.alias_refcount.items() if refs]
    if (
        joined != [query.base_table]
        or query.distinct
        or query.is_sliced
        or query.combinator
        or query.annotations
        or query.extra_tables
        or query.group_by is not None
        or query.base_table != "cards_agent"
    ):
        return None
    compiler = query.get_compiler(using=agents.db)
    try:
        where, params = compiler.compile(query.where)
    except EmptyResultSet:
        return None, []
    except FullResultSet:
        return "TRUE", []
    return (where or "TRUE"), list(params)


def _lexical_queryset(
    agents: QuerySet[Agent], terms: list[str], wanted: list[uuid.UUID], limit: int, *, every: bool
) -> dict[uuid.UUID, float]:
    """:func:`word_shares` on PostgreSQL built by Django (``agents`` with joins or annotations)."""
    lex = RawSQL(_share_sql(len(terms)), terms)
    parts = []
    if wanted:
        parts.append(_among(agents, wanted).annotate(lex=lex).order_by())
    if limit:
        joined = (" & " if every else " | ").join(terms)
        having = agents.extra(  # noqa: S610 - bound parameter, the GIN index on search_vector
            where=["cards_agent.search_vector @@ %s::tsquery"], params=[joined]
        )
        if every:
            parts.append(having.annotate(lex=RawSQL("1.0::float", [])).order_by()[:limit])
        else:
            parts.append(having.annotate(lex=lex).order_by("-lex", "pk")[:limit])
    if not parts:
        return {}
    rows = [part.values_list("pk", "lex") for part in parts]
    query = rows[0].union(*rows[1:], all=True) if len(rows) > 1 else rows[0]
    return {pk: float(found or 0.0) for pk, found in query}


def word_shares(
    text: str,
    agents: QuerySet[Agent],
    ids: Iterable[uuid.UUID] | None,
    limit: int,
    *,
    every: bool = True,
) -> dict[uuid.UUID, float]:
    """The share (0..1) of the need's telling words each agent's text has: of the agents of
    ``ids`` (when given) and of the best ``limit`` agents having every word (``every``) or any;
    one query on PostgreSQL."""
    wanted = list(ids) if ids is not None else []
    if _postgres():
        lexemes = _lexemes(text)
        if not lexemes:
            return {}
        terms = [f"'{lexeme}'" for lexeme in lexemes]
        condition = _condition_of(agents)
        if condition is None:
            return _lexical_queryset(agents, terms, wanted, limit, every=every)
        where, params = condition
        if where is None:  # the filters keep no agent
            return {}
        share = _share_sql(len(terms))
        parts: list[str] = []
        values: list[Any] = []
        if wanted:
            parts.append(
                f'SELECT "cards_agent"."id", {share} FROM "cards_agent"'
                f' WHERE ({where}) AND "cards_agent"."id" = ANY(%s::uuid[])'
            )
            values += [*terms, *params, uuid_array(wanted)]
        if limit:
            joined = (" & " if every else " | ").join(terms)
            if every:  # each has every word: a share of 1, nothing to sort (see below)
                parts.append(
                    'SELECT "cards_agent"."id", 1.0::float FROM "cards_agent"'
                    f' WHERE ({where}) AND "cards_agent"."search_vector" @@ %s::tsquery'
                    f" LIMIT {int(limit)}"
                )
                values += [*params, joined]
            else:
                parts.append(
                    f'SELECT "cards_agent"."id", {share} AS lex FROM "cards_agent"'
                    f' WHERE ({where}) AND "cards_agent"."search_vector" @@ %s::tsquery'
                    f' ORDER BY 2 DESC, "cards_agent"."id" LIMIT {int(limit)}'
                )
                values += [*terms, *params, joined]
        if not parts:
            return {}
        sql = " UNION ALL ".join(f"({part})" for part in parts)
        with connection.cursor() as cursor:
            cursor.execute(sql, values)
            return {pk: float(found or 0.0) for pk, found in cursor.fetchall()}
    words = _words(text)
    if not words:
        return {}
    out: dict[uuid.UUID, float] = {}
    found = agents.filter(pk__in=wanted) if wanted else agents.none()
    if limit:
        anyword = Q()
        for word in words[:10]:
            anyword |= Q(search_text__icontains=word)
        best = agents.filter(anyword)[: limit * 5]
        for pk, body in best.values_list("pk", "search_text"):
            body = (body or "").lower()
            had = sum(1 for w in words if w in body) / len(words)
            if had >= 1.0 or not every:
                out[pk] = had
    for pk, body in found.values_list("pk", "search_text"):
        body = (body or "").lower()
        out[pk] = sum(1 for w in words if w in body) / len(words)
    return out

"""Facet counts: how many public agents have each tag, mode and extension.

Read from :class:`~cards.models.FacetCount`, which :mod:`cards.rendering.store` maintains in the
same transaction as each agent's documents, so a facet is one index range scan however many
agents there are. The counts are over agents an anonymous default search finds (approved or
featured, not deleted, not gone), whoever asks.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db.models import F

from cards.indexing import normalise_tag
from cards.models import FacetCount
from cards.models.agents import Negative
from cards.reads.paging import Keyset
from registry.mediatypes import MediaTypeError, parse_media_type

# Most common first, then by name: one ascending key, ``rank`` = -agents, so that a page after
# a cursor is the row comparison ``(rank, key) > (X, Y)`` on the facet indexes.
KEYSET = {
    kind: Keyset(scope=f"facets-rank:{kind}", order=("rank", "key")) for kind in FacetCount.Kind
}


@lru_cache(maxsize=4096)
def _mode_parts(media_type: str) -> tuple[str, str | None]:
    try:
        media = parse_media_type(media_type)
    except MediaTypeError:
        return media_type, None
    return media.essence, media.schema


def facet_page(
    kind: str, *, prefix: str = "", direction: str = "", cursor: str = "", limit: int
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """One page of a facet, most common first, and the sort key of its last row if more."""
    rows = FacetCount.objects.alias(rank=Negative(F("agents"))).filter(kind=kind, agents__gt=0)
    if direction or kind != FacetCount.Kind.MODE:
        rows = rows.filter(direction=direction)  # only modes have one; "" for the others
    if prefix:
        if kind == FacetCount.Kind.TAG:
            prefix = normalise_tag(prefix)
        elif kind == FacetCount.Kind.MODE:
            prefix = prefix.lower()
        rows = rows.filter(key__startswith=prefix)
    keyset = KEYSET[FacetCount.Kind(kind)]
    found = list(
        keyset.apply(rows, cursor).values_list("key", "direction", "agents", "extra")[: limit + 1]
    )
    more = len(found) > limit
    found = found[:limit]
    out = [_shape(kind, key, way, agents, extra) for key, way, agents, extra in found]
    last = [-found[-1][2], found[-1][0]] if more and found else None
    return out, last


def _shape(kind: str, key: str, direction: str, agents: int, extra: int) -> dict[str, Any]:
    if kind == FacetCount.Kind.TAG:
        return {"tag": key, "agents": agents, "skills": extra}
    if kind == FacetCount.Kind.MODE:
        essence, schema = _mode_parts(key)
        return {
            "media_type": key,
            "essence": essence,
            "schema": schema,
            "direction": direction,
            "agents": agents,
        }
    if kind == FacetCount.Kind.SCHEMA:
        return {"schema": key, "agents": agents}
    return {"uri": key, "agents": agents, "required_by": extra}


def top(kind: str, *, limit: int, direction: str = "") -> list[dict[str, Any]]:
    return facet_page(kind, direction=direction, limit=limit)[0]

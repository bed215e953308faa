"""How much of one agent a stored document, a page or a list answer carries (issue 43, item 2).

A card may be up to ``REGISTRY_FETCH_MAX_BYTES`` (1 MiB) of skills, interfaces or long strings,
and a live run may store thousands of check rows. The documents every door serves are rendered
once, at write time, with the first items of each list (by count, and within a byte budget so
that a few huge items cannot fill a document), each list's total beside it, and the rest one
request away (``/api/v1/agents/{id}/skills``, ``/interfaces``, ``/live-checks``; the card
itself). docs/api.md ("Large cards") states the numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# Items of each list in an agent's detail document (and on the first page of its catalogue page).
DETAIL_SKILLS = 20
DETAIL_INTERFACES = 20
DETAIL_CHECKS = 50
DETAIL_FINDINGS = 200
DETAIL_EXTENSIONS = 20
DETAIL_SIGNATURES = 20
DETAIL_KEYS = 20
# ...and the bytes (compact JSON, UTF-8) each list may take at most.
SKILLS_BYTES = 96 * 1024
CHECKS_BYTES = 64 * 1024
FINDINGS_BYTES = 48 * 1024
EXTENSIONS_BYTES = 32 * 1024

# A list row (search results): the first skills, each with its first tags; a short description.
SUMMARY_SKILLS = 10
SUMMARY_TAGS = 10
SUMMARY_SKILLS_BYTES = 2 * 1024
SUMMARY_DESCRIPTION = 500

# What ingest keeps of an agent's or a skill's description (cards/indexing.py).
DESCRIPTION = 20000
# One skill as any document shows it: every string cut to a length, lists to a count.
SKILL_DESCRIPTION = DESCRIPTION
SKILL_TAGS = 50
SKILL_EXAMPLES = 10
SKILL_MODES = 50
TEXT = 2000  # an example, a representative query
EXTENSION_DESCRIPTION = 5000  # what ingest keeps
WORD = 512  # an id, a name, a media type
TAG = 256  # what a tag is cut to when indexed (cards.indexing.normalise_tag)

# The sub-resource lists: page size (the API's limit, 1-100) and bytes a page may take.
PAGE_BYTES = 512 * 1024

# ARD: the discovery terms a search result or an entry carries.
ARD_TAGS = 50
ARD_QUERIES = 20
ARD_DESCRIPTION = 2000


def clip(value: Any, limit: int) -> Any:
    """``value`` cut to ``limit`` characters when it is a longer string, with an ellipsis to say
    so; anything else as it is."""
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def strings(values: Any, count: int, limit: int) -> list[Any]:
    """The first ``count`` items of a list, strings among them clipped to ``limit``."""
    if not isinstance(values, list):
        return []
    return [clip(value, limit) for value in values[:count]]


def size(value: Any) -> int:
    """Bytes of ``value`` as a stored document writes it (compact JSON, UTF-8)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def within(
    items: Iterable[T], *, count: int, budget: int, shape: Callable[[T], Any] = lambda x: x
) -> list[Any]:
    """The first items (shaped) while there are at most ``count`` of them and they take at most
    ``budget`` bytes together; the list stops at the first item that would not fit."""
    out: list[Any] = []
    used = 0
    for item in items:
        if len(out) >= count:
            break
        shaped = shape(item)
        used += size(shaped) + 1
        if used > budget:
            break
        out.append(shaped)
    return out


def bounded(
    name: str,
    items: Sequence[T],
    *,
    count: int,
    budget: int,
    shape: Callable[[T], Any] = lambda x: x,
) -> dict[str, Any]:
    """A bounded list of a document and its size: ``{name: the first items (within),
    name_total: how many there are}``; the rest is a page away."""
    return {
        name: within(items, count=count, budget=budget, shape=shape),
        f"{name}_total": len(items),
    }

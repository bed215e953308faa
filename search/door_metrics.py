"""Searches counted and timed at the door that answered them.

Every door (the REST API, the catalogue, ARD, MCP, A2A) runs its searches through the same read
module, but only the door knows it is the one asking: each wraps its search in
:func:`searched` with its own name, and ``registry_searches_total`` /
``registry_search_duration_seconds`` (registry/metrics.py) carry it as the ``door`` label.

A list is not a search: the REST list and the catalogue's first page with no text and no filter
are not counted (``filtered=False``); a search refused as malformed (a 400) is not either.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from registry import metrics
from search.filters import AgentSearch
from search.semantic import semantic_available


def filtering(search: AgentSearch) -> bool:
    """Whether ``search`` asks for anything (text or a filter), rather than the plain list."""
    return search != AgentSearch()


def searched(
    door: str, text: str = "", *, ranked: bool = True, filtered: bool = True
) -> AbstractContextManager[None]:
    """Count and time one search at ``door`` (nothing when not ``filtered``: a list). Its
    ``mode`` label is ``semantic`` when it is ranked by meaning (there is text, the door ranks
    it, ``ranked``, and the model is installed), ``lexical`` otherwise."""
    if not filtered:
        return nullcontext()
    mode = "semantic" if ranked and text and semantic_available() else "lexical"
    return metrics.search_observed(door, mode)

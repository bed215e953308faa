"""Searches counted and timed at the door that answered them.

Every door (the REST API, the catalogue, ARD, MCP, A2A) runs its searches through the same read
module, but only the door knows it is the one asking: each wraps its search in
:func:`searched` with its own name, and ``registry_searches_total`` /
``registry_search_duration_seconds`` (registry/metrics.py) carry it as the ``door`` label.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from cards.reads.semantic import semantic_available
from registry import metrics


def searched(door: str, text: str = "", *, ranked: bool = True) -> AbstractContextManager[None]:
    """Count and time one search at ``door``. Its ``mode`` label is ``semantic`` when it is
    ranked by meaning (there is text, the door ranks it, ``ranked``, and the model is
    installed), ``lexical`` otherwise."""
    mode = "semantic" if ranked and text and semantic_available() else "lexical"
    return metrics.search_observed(door, mode)

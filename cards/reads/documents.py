"""Serving the stored documents: a detail is one row, a page is stored summaries joined.

The bytes were rendered at write time (:mod:`cards.rendering.store`); here they get the
registry's base URL in place of the placeholder and, for a detail, the two fields that depend on
the reader (``moderation`` with its reason for the owner and staff, ``owned``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from cards.models import Agent
from cards.reads import gate
from cards.reads.gate import Viewer
from cards.rendering.documents import BASE, moderation_section
from cards.rendering.store import DOC_FORMAT, agent_render
from registry.compiled import Compiled, UUIDArray, among

_BASE_BYTES = BASE.encode()


def base_of(request: Any) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def with_base(text: str, base: str) -> str:
    return text.replace(BASE, base)  # one pass; the same string back when BASE is not in it


def detail(viewer: Viewer, pk: Any, *, base: str) -> str:
    """The detail document of one visible agent (a 404 problem otherwise)."""
    row = _detail_row(viewer, pk)
    if row is None:
        raise gate.not_found()
    doc, doc_format, state, reason, owner_id = row
    if doc_format != DOC_FORMAT or not doc:
        agent_render(pk)  # a row from before this format: render it now, once
        row = _detail_row(viewer, pk)
        if row is None:
            raise gate.not_found()
        doc, doc_format, state, reason, owner_id = row
    manages = viewer.staff or (viewer.user_id is not None and viewer.user_id == owner_id)
    extra = _reader_fields(state, reason) if manages else _public_fields(state)
    return with_base(doc[:-1] + "," + extra, base)


def _reader_fields(state: str, reason: str | None) -> str:
    """``"moderation":{...},"owned":...}``: the end of a detail, for its owner or staff."""
    extra = json.dumps(
        {"moderation": moderation_section(state, reason), "owned": True},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return extra[1:]


@functools.lru_cache(maxsize=16)  # one per moderation state
def _public_fields(state: str) -> str:
    """The end of a detail for everyone else: the state without its reason, not owned."""
    extra = json.dumps(
        {"moderation": moderation_section(state, None), "owned": False},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return extra[1:]


def _detail_row(viewer: Viewer, pk: Any) -> tuple[Any, ...] | None:
    return gate.one_row(
        viewer, pk, "detail_doc", "doc_format", "moderation", "moderation_reason", "submitted_by_id"
    )


def summaries(ids: Sequence[Any], docs: dict[Any, tuple[str, int]]) -> list[str]:
    """The stored summaries of ``ids`` in order, rendering any that are missing or stale."""
    stale = [pk for pk in ids if docs[pk][1] != DOC_FORMAT or not docs[pk][0]]
    if stale:
        for pk in stale:
            agent_render(pk)
        fresh = Agent.objects.filter(pk__in=stale).values_list("pk", "summary_doc", "doc_format")
        docs.update({pk: (doc, fmt) for pk, doc, fmt in fresh})
    return [docs[pk][0] for pk in ids]


_STORED: Compiled | None = None


def _stored_by_ids() -> Compiled:
    """(id, summary, its format) of the agents of a ``UUIDArray`` of ids (PostgreSQL)."""
    global _STORED
    if _STORED is None:
        _STORED = Compiled(
            lambda ids: among(Agent.objects.order_by(), ids).values_list(
                "pk", "summary_doc", "doc_format"
            ),
            ids=UUIDArray(),
        )
    return _STORED


def ranked_documents(found: Sequence[Any]) -> list[tuple[str, Any]]:
    """The stored summaries of ranked agents (entries whose first item is the id, best first),
    in that order, each with its entry; an agent gone meanwhile is left out."""
    ids = [entry[0] for entry in found]
    if connection.vendor == "postgresql":  # SQL compiled once, the ids as one array
        rows: Any = _stored_by_ids().all(ids=ids) if ids else []
    else:
        rows = Agent.objects.filter(pk__in=ids).values_list("pk", "summary_doc", "doc_format")
    docs = {pk: (doc, fmt) for pk, doc, fmt in rows}
    kept = [entry for entry in found if entry[0] in docs]
    texts = summaries([entry[0] for entry in kept], docs)
    return list(zip(texts, kept, strict=True))


def page_of_summaries(
    agents: QuerySet[Agent], *, keys: Sequence[str], limit: int
) -> tuple[list[str], list[Any] | None]:
    """One page of ``agents`` (already ordered and after the cursor) as stored summaries, and
    the sort key of its last row when there is a next page."""
    rows = list(agents.values_list("pk", "summary_doc", "doc_format", *keys)[: limit + 1])
    return summaries_page(rows, limit=limit)


def summaries_page(
    rows: list[tuple[Any, ...]], *, limit: int
) -> tuple[list[str], list[Any] | None]:
    """Rows of (pk, summary_doc, doc_format, *sort key), one more than a page when there is a
    next one: the summaries, and the sort key of the page's last row if there is more."""
    more = len(rows) > limit
    rows = rows[:limit]
    docs = {row[0]: (row[1], row[2]) for row in rows}
    texts = summaries([row[0] for row in rows], docs)
    last = list(rows[-1][3:]) if more and rows else None
    return texts, last


def results_json(texts: Sequence[str], next_url: str | None, *, base: str, **extra: Any) -> str:
    """``{"results": [...], "next": ...}`` from stored documents, without parsing them."""
    tail = {"next": next_url, **extra}
    body = '{"results":[' + ",".join(texts) + "]," + json.dumps(tail, separators=(",", ":"))[1:]
    return with_base(body, base)

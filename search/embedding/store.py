"""Computing and storing the agents' embeddings: ``AgentEmbedding`` rows are the source of truth.

An agent is embedded again only when its texts (or the model) changed: the row keeps the sha256
of both. Then only its changed texts go through the model: each row's key (:func:`row_digest`)
is stored in ``row_digests``, and a row whose key was stored is kept (each text being run
alone, the model would give it the same row). Its ``vector`` holds several float32 rows: the
whole text's, then one per skill (:func:`search.embedding.texts.agent_texts`). Each write takes
a new ``seq`` (a PostgreSQL sequence; on SQLite, one more than the largest), which is how every
process's vector index finds what changed (:mod:`search.index.vectors`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from django.db import connection, transaction

from cards.models import Agent
from search.embedding import model
from search.embedding.texts import agent_texts, digest
from search.models import AgentEmbedding

CHUNK = 64
ROW_KEY = 8  # bytes of a row's key (row_digest)


def _next_seqs(count: int) -> list[int]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval('cards_agentembedding_seq') FROM generate_series(1, %s)", [count]
            )
            return [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT COALESCE(MAX(seq), 0) FROM cards_agentembedding")
        top = cursor.fetchone()[0]
    return list(range(top + 1, top + 1 + count))


def embed_agents(ids: Iterable[uuid.UUID | str], *, force: bool = False) -> int:
    """Embed the agents of ``ids`` whose text changed (all of them with ``force``); returns how
    many rows were written. Agents without text yet (never crawled) are left alone."""
    wanted = list(ids)
    if not wanted or not model.available():
        return 0
    written = 0
    for start in range(0, len(wanted), CHUNK):
        try:
            written += _embed_chunk(wanted[start : start + CHUNK], force=force)
        except model.Unavailable:  # the model failed to load: said once in the log
            break
    return written


def _embed_chunk(ids: Sequence[uuid.UUID | str], *, force: bool) -> int:
    texts = {pk: parts for pk, parts in agent_texts(ids).items() if parts[0]}
    if not texts:
        return 0
    name = model.model_id()
    digests = {pk: digest("\x1e".join(parts), name) for pk, parts in texts.items()}
    if not force:
        stored = dict(
            AgentEmbedding.objects.filter(agent_id__in=list(texts)).values_list(
                "agent_id", "text_sha256"
            )
        )
        texts = {pk: text for pk, text in texts.items() if stored.get(pk) != digests[pk]}
    if not texts:
        return 0
    keys = list(texts)
    flat = [part for pk in keys for part in texts[pk]]
    row_keys = [row_digest(part, name) for part in flat]
    embedded = _rows(flat, row_keys, {} if force else _kept_rows(keys))
    embedded[[i for i, part in enumerate(flat) if not part]] = 0.0  # a skill with no text
    vectors: list[np.ndarray] = []
    row_digests: list[bytes] = []
    start = 0
    for pk in keys:  # one block per agent: the whole text's row, then one row per skill
        vectors.append(embedded[start : start + len(texts[pk])])
        row_digests.append(b"".join(row_keys[start : start + len(texts[pk])]))
        start += len(texts[pk])
    with transaction.atomic():
        seqs = _next_seqs(len(keys))
        rows = [
            AgentEmbedding(
                agent_id=pk,
                model=name,
                text_sha256=digests[pk],
                vector=vectors[i].astype("<f4").tobytes(),
                row_digests=row_digests[i],
                seq=seqs[i],
            )
            for i, pk in enumerate(keys)
        ]
        AgentEmbedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["agent"],
            update_fields=["model", "text_sha256", "vector", "row_digests", "seq", "updated_at"],
        )
    return len(rows)


def stored_rows(raw: Any) -> np.ndarray:
    """An ``AgentEmbedding.vector``'s rows as written here: (1 + skills) x DIM float32, the
    whole text's first."""
    return np.frombuffer(bytes(raw), dtype="<f4").astype(np.float32).reshape(-1, model.DIM)


def row_digest(text: str, name: str) -> bytes:
    """A row's key: the first 8 bytes of its text's digest with the model's id."""
    return bytes.fromhex(digest(text, name)[:16])


def _kept_rows(ids: Sequence[uuid.UUID]) -> dict[bytes, np.ndarray]:
    """The stored rows of ``ids`` by their row keys (rows written before the keys were stored
    have none): a text embedded before need not be run again, each text being run alone
    (model.embed), its row is the same."""
    kept: dict[bytes, np.ndarray] = {}
    stored = AgentEmbedding.objects.filter(agent_id__in=list(ids)).values_list(
        "vector", "row_digests"
    )
    for raw, keys in stored:
        rows = stored_rows(raw)
        keys = bytes(keys or b"")
        if len(keys) != ROW_KEY * len(rows):
            continue
        for i, row in enumerate(rows):
            kept[keys[i * ROW_KEY : (i + 1) * ROW_KEY]] = row
    return kept


def _rows(texts: list[str], keys: list[bytes], kept: dict[bytes, np.ndarray]) -> np.ndarray:
    """One row per text: a kept row where its key has one, the model's for the others."""
    missing = [i for i, key in enumerate(keys) if key not in kept]
    rows = np.zeros((len(texts), model.DIM), dtype=np.float32)
    if missing:
        rows[missing] = model.embed([texts[i] for i in missing])
    for i, key in enumerate(keys):
        if key in kept:
            rows[i] = kept[key]
    return rows


def reembed_all(
    *, force: bool = False, batch: int = 256, progress: Callable[[int, int], None] | None = None
) -> int:
    """Embed every agent (those whose text changed, or all with ``force``), in id order; calls
    ``progress(done, total)`` after each batch. Returns how many rows were written."""
    ids = list(Agent.objects.order_by("pk").values_list("pk", flat=True))
    written = 0
    for start in range(0, len(ids), batch):
        written += embed_agents(ids[start : start + batch], force=force)
        if progress is not None:
            progress(min(start + batch, len(ids)), len(ids))
    return written

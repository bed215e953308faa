"""Writing a snapshot of the vector index (the worker: the beat task ``cards.save_vector_index``
and ``manage.py reembed``).

A new snapshot starts from the current one when there is one (only changed rows are added to
its graph), stores every agent's and row's hubness for the references of the day, is made
current on this machine and published to the database for the others
(:mod:`search.index.publishing`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from django.db.models import Max

from search.embedding import hubs, model
from search.embedding.model import DIM, NAME, load_runtime_first
from search.embedding.store import stored_rows
from search.index import snapshot
from search.index.publishing import publish
from search.index.snapshot import KEY_SPAN, KEYS, WINDOW_SECONDS
from search.models import AgentEmbedding

logger = logging.getLogger(__name__)


def save_snapshot(*, threads: int = 0) -> int:
    """Write a new snapshot of every stored vector and make it current; returns its size.

    Starts from the current snapshot when there is one (only changed rows are added to the
    graph), from nothing otherwise. Older snapshots are removed, but the one before stays for
    processes still reading it.
    """
    load_runtime_first()
    from usearch.index import Index  # lazy: only after ONNX Runtime's library (a crash)

    where = snapshot.directory()
    where.mkdir(parents=True, exist_ok=True)
    started = time.time()
    # Rows older than the window are all committed: a reader may start after them.
    floor = (
        AgentEmbedding.objects.filter(updated_at__lt=_aware(started - WINDOW_SECONDS))
        .aggregate(top=Max("seq"))
        .get("top")
        or 0
    )
    current = snapshot.current_name()
    base = snapshot.Snapshot.open(current or "") if current else None
    ids: list[uuid.UUID] = list(base.ids) if base else []
    seqs: list[int] = [int(s) for s in base.seqs] if base else []
    position = dict(base.position) if base else {}
    matrix = np.array(base.matrix, dtype=np.float32) if base else np.zeros((0, DIM), np.float32)
    skill_rows: list[np.ndarray] = (
        [
            np.asarray(base.skills[int(base.offsets[i]) : int(base.offsets[i + 1])])
            for i in range(len(base.ids))
        ]
        if base
        else []
    )
    graph = snapshot.new_graph()
    if base is not None and base.graph is not None and len(base.ids):
        restored = Index.restore(str(where / base.name / "graph.usearch"))  # writable copy
        if restored is not None and restored.dtype == graph.dtype:
            graph = restored
        else:  # unreadable, or rows of another element type: start again from every row
            base, ids, seqs, position, skill_rows = None, [], [], {}, []
            matrix = np.zeros((0, DIM), np.float32)
    after = min(base.floor, base.mark) if base else -1
    changed = [
        (pk, int(seq), stored_rows(raw))
        for pk, raw, seq in AgentEmbedding.objects.filter(
            model__startswith=NAME + "/", seq__gt=after
        )
        .order_by("seq")
        .values_list("agent_id", "vector", "seq")
        .iterator(chunk_size=5000)
    ]
    additions: list[np.ndarray] = []
    keys: list[int] = []
    firsts: dict[int, np.ndarray] = {}
    for pk, seq, block in changed:
        block = block[:KEY_SPAN]
        at = position.get(pk)
        if at is not None:
            if seqs[at] >= seq:
                continue
            seqs[at] = seq
            stored = 1 + len(skill_rows[at])
            graph.remove(np.arange(at * KEY_SPAN, at * KEY_SPAN + stored, dtype=np.uint64))
            skill_rows[at] = block[1:].astype(np.float16)
        else:
            at = position[pk] = len(ids)
            ids.append(pk)
            seqs.append(seq)
            skill_rows.append(block[1:].astype(np.float16))
        firsts[at] = block[0]
        keys.extend(at * KEY_SPAN + r for r in range(len(block)))
        additions.extend(block)
    if additions:
        grown = len(ids) - len(matrix)
        if grown > 0:
            matrix = np.vstack([matrix, np.zeros((grown, DIM), np.float32)])
        for at, vector in firsts.items():
            matrix[at] = vector
        graph.add(np.asarray(keys, dtype=np.uint64), np.stack(additions), threads=threads)
    mark = max(seqs, default=0)
    if base is not None and not additions and base.hub_signature == _hub_signature_now():
        # Nothing changed. (A model or references of another signature, after an upgrade,
        # write the snapshot again: otherwise every search computes the rows' hubness.)
        return len(ids)
    name = f"s{mark}-{os.getpid()}-{int(started * 1000)}"  # a rewrite of a mark: another name
    target = where / name
    target.mkdir()
    graph.save(str(target / "graph.usearch"))
    np.save(target / "ids.npy", np.array([list(pk.bytes) for pk in ids], dtype=np.uint8))
    np.save(target / "seqs.npy", np.asarray(seqs, dtype=np.int64))
    np.save(target / "matrix.npy", matrix)
    counts = [len(block) for block in skill_rows]
    np.save(target / "offsets.npy", np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
    skills = np.vstack(skill_rows) if sum(counts) else np.zeros((0, DIM), dtype=np.float16)
    np.save(target / "skills.npy", skills)
    signature = _save_hubs(target / "hubs.npy", matrix, skills, counts)
    meta = {"floor": floor, "mark": mark, "n": len(ids), "keys": KEYS, "hubs": signature}
    (target / "meta.json").write_text(json.dumps(meta))
    snapshot.make_current(where, name)
    keep = {name, base.name if base else ""}
    publish(target, keep)
    for old in where.iterdir():
        if old.is_dir() and old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    logger.info("vector index snapshot %s: %d agents, %d rows changed", name, len(ids), len(keys))
    return len(ids)


def _hub_signature_now() -> str:
    """The signature :func:`_save_hubs` would store now ("" where the model is not available)."""
    try:
        return hubs.signature() if model.available() else ""
    except model.Unavailable:
        return ""


def _save_hubs(path: Path, matrix: np.ndarray, skills: np.ndarray, counts: list[int]) -> str:
    """Write every agent's and every row's hubness (the layout of ``Snapshot.hubs``); returns
    the references' signature, or "" (and an empty file) where the model is not available."""
    try:
        refs = hubs.references() if model.available() else None
    except model.Unavailable:
        refs = None
    if refs is None:
        np.save(path, np.zeros(0, dtype=np.float32))
        return ""
    count = len(counts)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    agent = np.zeros(count, dtype=np.float32)
    whole = np.zeros(count, dtype=np.float32)
    skill = np.zeros(len(skills), dtype=np.float32)
    step = 5000  # agents at a time: their rows, grouped (whole text first), and the references
    for first in range(0, count, step):
        last = min(first + step, count)
        sizes = np.asarray(counts[first:last], dtype=np.int64) + 1
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        grouped = np.zeros((int(sizes.sum()), DIM), dtype=np.float32)
        grouped[starts] = matrix[first:last]
        slots = np.ones(len(grouped), dtype=bool)
        slots[starts] = False
        grouped[slots] = skills[offsets[first] : offsets[last]]
        agent[first:last], row = hubs.profile(grouped, starts, refs)
        whole[first:last] = row[starts]
        skill[offsets[first] : offsets[last]] = row[slots]
    np.save(path, np.concatenate([agent, whole, skill]).astype(np.float32))
    return hubs.signature()


def _aware(epoch: float) -> Any:
    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC)

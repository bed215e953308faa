"""A snapshot of the vector index: its files, opening them, and which one is current.

A snapshot is a directory under ``REGISTRY_EMBEDDING_DIR`` (one directory of snapshots per
database, :func:`directory`) written by the worker (:mod:`search.index.writing`): a usearch HNSW
graph of every row (int8, :data:`GRAPH_DTYPE`: it finds the candidates), the agents' ids, seqs,
the whole-text float32 vectors and the skills' vectors (float16, ``skills.npy`` indexed by
``offsets.npy``), and each agent's and row's hubness. Processes open it memory-mapped
(:class:`Snapshot`), so the web workers of a machine share its pages; the file ``current``
names the one to read.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from search.embedding import threads
from search.embedding.model import DIM, load_runtime_first

# Every module of the index multiplies rows through numpy: its BLAS threads are limited first.
threads.limit_blas()

logger = logging.getLogger(__name__)

FILES = (
    "graph.usearch",
    "ids.npy",
    "seqs.npy",
    "matrix.npy",
    "offsets.npy",
    "skills.npy",
    "hubs.npy",
)
KEY_SPAN = 64  # graph key of an agent's row r: position * KEY_SPAN + r (r = 0: the whole text)
KEYS = "rows64-hubs"  # the layout, in meta.json: snapshots with another one are written again
# The graph only finds candidates (their rows are then scored exactly from matrix.npy and
# skills.npy), so it holds int8 rows: at 100,000 agents (426,000 rows) a search for 300 rows
# costs 1.1 ms against 1.7 ms for 200 rows of a float16 graph, and finds as many of the exact
# 100 nearest agents (0.90 against 0.90; bench/graph_dtype.py, docs/search.md). A snapshot whose
# graph holds float16 rows (written before) is read as it is; the worker writes the next one
# from every row.
GRAPH_DTYPE = "i8"
# Commits can land out of ``seq`` order: rows older than this are all committed.
WINDOW_SECONDS = 30.0


def float32_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` as float32. The snapshot's float16 skill rows are converted by numkong's SIMD
    kernel (installed with usearch; the same values, bit for bit): numpy's own conversion cost
    0.53 ms of a search's 1.4 ms of scoring at 100,000 agents, numkong's 0.04 ms
    (docs/search.md, "Speed at 100,000 agents")."""
    if rows.dtype != np.float16:
        return np.asarray(rows, dtype=np.float32)
    load_runtime_first()  # numkong is usearch's: ONNX Runtime's library must be loaded first
    try:
        import numkong  # lazy: optional, and loaded only after ONNX Runtime's library
    except ImportError:
        return rows.astype(np.float32)
    return np.asarray(numkong.astype(np.asarray(rows), "float32"))


def directory() -> Path:
    """The snapshots of this database (one directory per database: a snapshot describes the
    rows of the database it was written from)."""
    name = str(connection.settings_dict.get("NAME") or "default")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).name if "/" in name else name)
    return Path(settings.REGISTRY_EMBEDDING_DIR) / "index" / f"{connection.vendor}-{slug}"


@dataclass
class Snapshot:
    """Files written by :func:`search.index.writing.save_snapshot`, opened read-only
    (memory-mapped)."""

    ids: list[uuid.UUID] = field(default_factory=list)
    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, DIM), dtype=np.float32))
    graph: Any = None
    skills: np.ndarray = field(default_factory=lambda: np.zeros((0, DIM), dtype=np.float16))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    # Hubness (search/embedding/hubs.py) stored by the worker: each agent's, then each
    # whole-text row's, then each skill row's (2 x agents + skill rows values); valid for
    # ``hub_signature``.
    hubs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    hub_signature: str = ""
    sorted_seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    position: dict[uuid.UUID, int] = field(default_factory=dict)
    floor: int = 0
    mark: int = 0
    name: str = ""

    @classmethod
    def open(cls, name: str) -> Snapshot | None:
        load_runtime_first()
        from usearch.index import Index  # lazy: only after ONNX Runtime's library (a crash)

        path = directory() / name
        try:
            meta = json.loads((path / "meta.json").read_text())
            if meta.get("keys") != KEYS:
                raise ValueError("an older layout")
            raw_ids = np.load(path / "ids.npy")
            snapshot = cls(
                ids=[uuid.UUID(bytes=bytes(row)) for row in raw_ids],
                seqs=np.load(path / "seqs.npy"),
                matrix=np.load(path / "matrix.npy", mmap_mode="r"),
                graph=Index.restore(str(path / "graph.usearch"), view=True),
                skills=np.load(path / "skills.npy", mmap_mode="r"),
                offsets=np.load(path / "offsets.npy"),
                hubs=np.load(path / "hubs.npy"),
                hub_signature=str(meta.get("hubs") or ""),
                floor=int(meta["floor"]),
                mark=int(meta["mark"]),
                name=name,
            )
        except (OSError, ValueError, KeyError):
            logger.warning("the vector index snapshot %s is unreadable: ignored", path)
            return None
        snapshot.position = {pk: i for i, pk in enumerate(snapshot.ids)}
        snapshot.sorted_seqs = np.sort(np.asarray(snapshot.seqs, dtype=np.int64))
        stored_hubs = 2 * len(snapshot.ids) + len(snapshot.skills)
        if len(snapshot.offsets) != len(snapshot.ids) + 1 or len(snapshot.hubs) not in (
            0,
            stored_hubs,
        ):
            logger.warning("the vector index snapshot %s is inconsistent: ignored", path)
            return None
        return snapshot

    def rows(self, at: int) -> np.ndarray:
        """Every vector of the agent at ``at``: the whole text's, then its skills'."""
        low, high = int(self.offsets[at]), int(self.offsets[at + 1])
        first = np.asarray(self.matrix[at], dtype=np.float32)[None, :]
        if high == low:
            return first
        return np.vstack([first, float32_rows(self.skills[low:high])])


def built_at(name: str) -> float:
    """When the snapshot ``name`` was built (Unix time), from its name (``s<mark>-<pid>-<ms>``,
    :func:`search.index.writing.save_snapshot`); 0.0 for a name of another form."""
    tail = name.rsplit("-", 1)[-1]
    return int(tail) / 1000 if tail.isdigit() and "-" in name else 0.0


def current_name() -> str | None:
    try:
        return (directory() / "current").read_text().strip() or None
    except OSError:
        return None


def make_current(where: Path, name: str) -> None:
    pointer = where / f".current.{os.getpid()}.{threading.get_ident()}"
    pointer.write_text(name)
    os.replace(pointer, where / "current")


def new_graph(dtype: str | None = None) -> Any:
    """An empty HNSW graph with the snapshot's settings (rows of ``DIM``, inner product), of
    :data:`GRAPH_DTYPE` rows unless ``dtype`` says otherwise."""
    load_runtime_first()
    from usearch.index import Index  # lazy: only after ONNX Runtime's library (a crash)

    kind = dtype or GRAPH_DTYPE
    return Index(ndim=DIM, metric="ip", dtype=kind, connectivity=16, expansion_add=128)


def agents_by_best_row(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For graph rows ``keys`` given best first: each agent once (its snapshot position), best
    first, and where in ``keys`` its best row is."""
    agents, first = np.unique(np.asarray(keys, dtype=np.int64) // KEY_SPAN, return_index=True)
    order = np.argsort(first)
    return agents[order], first[order]

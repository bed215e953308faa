"""The process-wide vector index: nearest agents to a query vector, and exact cosines.

Each agent has several vectors: its whole text's (row 0) and one per skill; its similarity to a
need is the best of them (a card's best skill, not its average).

``AgentEmbedding`` rows in the database are the source of truth. The index a process uses has
two parts:

- a **snapshot**: a usearch HNSW graph of every row (int8, :data:`GRAPH_DTYPE`: it finds the
  candidates), the agents' ids, seqs, the whole-text float32 vectors and the skills' vectors
  (float16, ``skills.npy`` indexed by ``offsets.npy``), in files under
  ``REGISTRY_EMBEDDING_DIR`` written by the worker (:func:`save_snapshot`, run by the beat task
  ``cards.save_vector_index`` and by ``manage.py reembed``). Processes open it memory-mapped, so
  the web workers of a machine share its pages;
- a **delta**: the rows written since the snapshot, read from the database by ``seq`` at most
  once a second (:data:`REFRESH_SECONDS`) and scanned exactly (they are few).

Commits can land out of ``seq`` order (two workers), so each refresh looks again at the rows of
the last :data:`WINDOW_SECONDS` seconds and keeps those it has not applied. A newer snapshot is
picked up by the same refresh. Without a snapshot everything is delta: an exact scan, which is
what small registries (``make run``, tests) use.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Max

from cards.embedding import hubs, threads
from cards.embedding.model import DIM, NAME, load_runtime_first
from cards.embedding.store import stored_rows
from cards.models import AgentEmbedding, VectorSnapshotPart
from registry import metrics

threads.limit_blas()

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 1.0
CHUNK_BYTES = 8 << 20  # a published snapshot file is stored in chunks of this size
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
ROWS_PER_AGENT_ASKED = 3  # rows asked of the graph per agent wanted (an agent has 4.3 rows)
WINDOW_SECONDS = 30.0
HUBS_CACHED = 1_000_000  # hubness values kept per process (agents and versions not in a snapshot)


def _float32_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` as float32. The snapshot's float16 skill rows are converted by numkong's SIMD
    kernel (installed with usearch; the same values, bit for bit): numpy's own conversion cost
    0.53 ms of a search's 1.4 ms of scoring at 100,000 agents, numkong's 0.04 ms
    (docs/search.md, "Speed at 100,000 agents")."""
    if rows.dtype != np.float16:
        return np.asarray(rows, dtype=np.float32)
    load_runtime_first()  # numkong is usearch's: ONNX Runtime's library must be loaded first
    try:
        import numkong
    except ImportError:
        return rows.astype(np.float32)
    return np.asarray(numkong.astype(np.asarray(rows), "float32"))


def _directory() -> Path:
    """The snapshots of this database (one directory per database: a snapshot describes the
    rows of the database it was written from)."""
    from django.db import connection

    name = str(connection.settings_dict.get("NAME") or "default")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).name if "/" in name else name)
    return Path(settings.REGISTRY_EMBEDDING_DIR) / "index" / f"{connection.vendor}-{slug}"


@dataclass
class _Snapshot:
    """Files written by :func:`save_snapshot`, opened read-only (memory-mapped)."""

    ids: list[uuid.UUID] = field(default_factory=list)
    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, DIM), dtype=np.float32))
    graph: Any = None
    skills: np.ndarray = field(default_factory=lambda: np.zeros((0, DIM), dtype=np.float16))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    # Hubness (cards/embedding/hubs.py) stored by the worker: each agent's, then each whole-text
    # row's, then each skill row's (2 x agents + skill rows values); valid for ``hub_signature``.
    hubs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    hub_signature: str = ""
    sorted_seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    position: dict[uuid.UUID, int] = field(default_factory=dict)
    floor: int = 0
    mark: int = 0
    name: str = ""

    @classmethod
    def open(cls, name: str) -> _Snapshot | None:
        load_runtime_first()
        from usearch.index import Index

        path = _directory() / name
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
        return np.vstack([first, _float32_rows(self.skills[low:high])])


def built_at(name: str) -> float:
    """When the snapshot ``name`` was built (Unix time), from its name (``s<mark>-<pid>-<ms>``,
    :func:`save_snapshot`); 0.0 for a name of another form."""
    tail = name.rsplit("-", 1)[-1]
    return int(tail) / 1000 if tail.isdigit() and "-" in name else 0.0


def _current_name() -> str | None:
    try:
        return (_directory() / "current").read_text().strip() or None
    except OSError:
        return None


def _make_current(directory: Path, name: str) -> None:
    pointer = directory / f".current.{os.getpid()}.{threading.get_ident()}"
    pointer.write_text(name)
    os.replace(pointer, directory / "current")


# --- the snapshot through PostgreSQL: machines without a shared disk --------------------------


def published_name() -> str | None:
    """The newest snapshot published to the database (complete: its meta.json is there)."""
    row = (
        VectorSnapshotPart.objects.filter(file="meta.json")
        .order_by("-id")
        .values_list("snapshot", flat=True)
        .first()
    )
    return row or None


def _publish(target: Path, keep: set[str]) -> None:
    """Store the files of the snapshot in ``target`` in the database (one transaction, meta.json
    last), and drop published snapshots other than ``keep``."""
    from django.db import transaction

    with transaction.atomic():
        for file in (*FILES, "meta.json"):
            data = (target / file).read_bytes()
            VectorSnapshotPart.objects.bulk_create(
                VectorSnapshotPart(
                    snapshot=target.name, file=file, chunk=i, data=data[start : start + CHUNK_BYTES]
                )
                for i, start in enumerate(range(0, max(len(data), 1), CHUNK_BYTES))
            )
        VectorSnapshotPart.objects.exclude(snapshot__in=keep | {target.name}).delete()


def _fetch(name: str) -> bool:
    """Copy the published snapshot ``name`` into this machine's directory and make it current;
    False when it is gone meanwhile. One process of the machine copies, the others wait."""
    import fcntl

    directory = _directory()
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".fetch.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (directory / name / "meta.json").exists():
                partial = directory / f".{name}.{os.getpid()}"
                shutil.rmtree(partial, ignore_errors=True)
                partial.mkdir()
                files: dict[str, Any] = {}
                parts = (
                    VectorSnapshotPart.objects.filter(snapshot=name)
                    .order_by("file", "chunk")
                    .values_list("file", "data")
                    .iterator(chunk_size=4)
                )
                for file, data in parts:
                    if file not in files:
                        files[file] = open(partial / file, "wb")  # noqa: SIM115 - closed below
                    files[file].write(bytes(data))
                for handle in files.values():
                    handle.close()
                if set(files) != {*FILES, "meta.json"}:
                    shutil.rmtree(partial, ignore_errors=True)
                    return False
                os.replace(partial, directory / name)
                logger.info("vector index snapshot %s copied from the database", name)
            if _current_name() != name:
                _make_current(directory, name)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return True


class VectorIndex:
    """One process's view of every agent's vector (see the module's docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot = _Snapshot()
        self.delta: dict[uuid.UUID, tuple[int, np.ndarray]] = {}
        self.delta_ids: list[uuid.UUID] = []
        self.delta_matrix = np.zeros((0, DIM), dtype=np.float32)
        self.delta_owner = np.zeros(0, dtype=np.int64)  # per row of delta_matrix: its agent
        # (agent, seq): its hubness and its rows', for agents whose hubness is not stored
        self.hubs: dict[tuple[uuid.UUID, int], tuple[float, np.ndarray]] = {}
        self.marks: deque[tuple[float, int]] = deque()
        self.checked = 0.0
        self.loaded = False

    # --- keeping in step ------------------------------------------------------------------

    def refresh(self, *, force: bool = False) -> None:
        """Read what changed since the last look (at most once a second unless ``force``)."""
        now = time.monotonic()
        if not force and self.loaded and now - self.checked < REFRESH_SECONDS:
            return
        with self.lock:
            if not force and self.loaded and now - self.checked < REFRESH_SECONDS:
                return
            self.checked = now
            name = _current_name()
            published = published_name()
            if published is not None and published != name and published != self.snapshot.name:
                # A newer snapshot written on another machine (or this one's lost its files).
                if _fetch(published):
                    name = published
            if not self.loaded or (name is not None and name != self.snapshot.name):
                self._open(name)
            self._catch_up(now)

    def _open(self, name: str | None) -> None:
        snapshot = _Snapshot.open(name) if name else None
        self.snapshot = snapshot or _Snapshot()
        # The node's snapshot age (registry/metrics.py): 0 while this process serves none.
        metrics.VECTOR_SNAPSHOT_BUILT.set(built_at(snapshot.name) if snapshot else 0.0)
        self.delta = {}
        self.marks = deque([(float("-inf"), self.snapshot.floor)])
        self.loaded = True

    def _floor(self, now: float) -> int:
        """The highest mark seen at least WINDOW_SECONDS ago: rows after it are looked at."""
        while len(self.marks) > 1 and now - self.marks[1][0] >= WINDOW_SECONDS:
            self.marks.popleft()
        return self.marks[0][1]

    def _applied(self, pk: uuid.UUID, seq: int) -> bool:
        if pk in self.delta:
            return self.delta[pk][0] >= seq
        at = self.snapshot.position.get(pk)
        return at is not None and int(self.snapshot.seqs[at]) >= seq

    def _catch_up(self, now: float) -> None:
        floor = self._floor(now)
        rows = AgentEmbedding.objects.filter(model__startswith=NAME + "/")
        # Every write takes a new seq and the table keeps one row an agent, so a seq this
        # process holds (snapshot or delta) is a row it has applied: only the others are read,
        # and the look-back window (tens of thousands of rows after a bulk load) costs a
        # column of integers, not a row each.
        seen = np.fromiter(rows.filter(seq__gt=floor).values_list("seq", flat=True), np.int64)
        delta_seqs = np.fromiter((seq for seq, _ in self.delta.values()), np.int64)
        held = np.concatenate([self.snapshot.sorted_seqs, delta_seqs])
        unseen = seen[~np.isin(seen, held)].tolist()
        found: list[tuple[Any, ...]] = []
        for start in range(0, len(unseen), 1000):
            chunk = unseen[start : start + 1000]
            found.extend(rows.filter(seq__in=chunk).values_list("agent_id", "vector", "seq"))
        mark = int(seen.max()) if len(seen) else floor
        if mark > self.marks[-1][1]:
            self.marks.append((now, mark))
        if found:
            for pk, raw, seq in found:
                if not self._applied(pk, int(seq)):
                    self.delta[pk] = (int(seq), stored_rows(raw))
            self.delta_ids = list(self.delta)
            blocks = [self.delta[pk][1] for pk in self.delta_ids]
            self.delta_matrix = np.vstack(blocks)
            self.delta_owner = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])

    # --- asking ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.snapshot.ids) + sum(
            1 for pk in self.delta if pk not in self.snapshot.position
        )

    def candidates(self, query: np.ndarray, count: int, *, floor: float = -1.0) -> list[uuid.UUID]:
        """About the ``count`` agents nearest to ``query``, for a ranking that then scores each
        of them exactly (:meth:`matches`): up to ``count`` of the snapshot's, in the graph's
        own order (an int8 graph's, approximate: no row is read here), then up to ``count``
        of the delta's, by their best row's exact cosine, at or above ``floor``."""
        self.refresh()
        found: list[uuid.UUID] = []
        snapshot, delta, delta_ids = self.snapshot, self.delta, self.delta_ids
        if snapshot.graph is not None and len(snapshot.ids):
            rows = len(snapshot.ids) + len(snapshot.skills)
            # Rows, best first; an agent's rows seldom sit together, so three rows asked per
            # agent wanted usually give that many agents (else the search is widened).
            wanted, asked = count + len(delta), int(ROWS_PER_AGENT_ASKED * count)
            while True:
                matches = snapshot.graph.search(query, min(asked, rows))
                keys = np.asarray(matches.keys, dtype=np.int64)
                if len(np.unique(keys // KEY_SPAN)) >= wanted or asked >= rows:
                    break
                asked *= 4
            agents, _ = agents_by_best_row(keys)
            ids = snapshot.ids
            for at in agents[:wanted].tolist():  # no more than asked for
                pk = ids[at]
                if not delta or pk not in delta:  # the delta holds newer rows
                    found.append(pk)
        if not len(delta_ids):
            return found[:count]
        best = np.full(len(delta_ids), -1.0, dtype=np.float32)
        np.maximum.at(best, self.delta_owner, self.delta_matrix @ query)  # each agent's best row
        nearest = [delta_ids[i] for i in np.argsort(-best)[:count].tolist() if best[i] >= floor]
        return [*found[:count], *nearest]  # the order matters not: each is scored exactly

    def nearest(self, query: np.ndarray, count: int) -> list[tuple[uuid.UUID, float]]:
        """About the ``count`` agents most similar to ``query``, each with its exact cosine (its
        best row's), best first."""
        cosines = self.similarities(query, self.candidates(query, count))
        return sorted(cosines.items(), key=lambda item: -item[1])[:count]

    def similarities(self, query: np.ndarray, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, float]:
        """The exact cosine of each agent of ``ids`` that has a vector: its best row's."""
        return {pk: best for pk, (best, *_) in self.matches(query, ids).items()}

    def matches(
        self,
        query: np.ndarray,
        ids: Iterable[uuid.UUID],
        refs: np.ndarray | None = None,
        *,
        row_weight: float = 0.0,
        center: float = 0.0,
    ) -> dict[uuid.UUID, tuple[float, int, float]]:
        """For each agent of ``ids`` that has a vector: (its best row's score, the position of
        its best-matching skill, -1 when it has no skill vector, and its hubness); see
        :meth:`scores`."""
        ids = list(ids)
        best, skill, hub, has = self.scores(query, ids, refs, row_weight=row_weight, center=center)
        return {
            ids[i]: (float(best[i]), int(skill[i]), float(hub[i]))
            for i in np.flatnonzero(has).tolist()
        }

    def scores(
        self,
        query: np.ndarray,
        ids: Sequence[uuid.UUID],
        refs: np.ndarray | None = None,
        *,
        row_weight: float = 0.0,
        center: float = 0.0,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Arrays in the order of ``ids``: each agent's best row's score (float64), the
        position of its best-matching skill (-1 when it has no skill vector), its hubness, and
        whether it has a vector at all (the others' values mean nothing).

        Without ``refs`` a row's score is its cosine and the hubness 0. With ``refs`` (the
        embedded references of :mod:`cards.embedding.hubs`), a row's score is its cosine less
        ``row_weight`` times the row's hubness above ``center``; hubness values come from the
        snapshot when it stored them for these references, else they are computed and kept
        per agent version. Snapshot agents are scored together, with no loop over their rows.
        """
        self.refresh()
        count = len(ids)
        best = np.zeros(count, dtype=np.float64)
        skill = np.full(count, -1, dtype=np.int64)
        hub = np.zeros(count, dtype=np.float64)
        has = np.zeros(count, dtype=bool)
        at_list: list[int] = []
        where: list[int] = []
        delta, position = self.delta, self.snapshot.position
        for i, pk in enumerate(ids):
            # A UUID's hash is computed in Python: no look-up in an empty delta.
            entry = delta.get(pk) if delta else None
            if entry is not None:
                seq, rows = entry
                agent_hub, row_hubs = self._hubs(pk, seq, rows, refs)
                row_scores = rows @ query
                if refs is not None:
                    row_scores -= row_weight * (row_hubs - center)
                best[i], skill[i] = _best(row_scores)
                hub[i], has[i] = agent_hub, True
                continue
            at = position.get(pk)
            if at is not None:
                at_list.append(at)
                where.append(i)
        if at_list:
            found = np.asarray(where, dtype=np.int64)
            best[found], skill[found], hub[found] = self._snapshot_scores(
                query, at_list, refs, row_weight, center
            )
            has[found] = True
        return best, skill, hub, has

    def _snapshot_scores(
        self,
        query: np.ndarray,
        at_list: list[int],
        refs: np.ndarray | None,
        row_weight: float,
        center: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best score, best skill or -1, hubness) of the snapshot agents at ``at_list``, in
        that order."""
        snapshot = self.snapshot
        order = np.argsort(at_list)  # reading the memory maps in order
        at = np.asarray(at_list, dtype=np.int64)[order]
        whole = np.asarray(snapshot.matrix[at], dtype=np.float32) @ query
        low = snapshot.offsets[at]
        counts = snapshot.offsets[at + 1] - low
        width = int(counts.max()) if len(counts) else 0
        present = np.arange(width)[None, :] < counts[:, None]  # agents x skill slots
        rows = (low[:, None] + np.arange(width)[None, :])[present]
        skills = np.full((len(at), width), -np.inf, dtype=np.float32)
        skills[present] = _float32_rows(snapshot.skills[rows]) @ query
        agent_hubs = np.zeros(len(at), dtype=np.float32)
        if refs is not None:
            count = len(snapshot.ids)
            if snapshot.hub_signature == hubs.signature() and len(snapshot.hubs):
                agent_hubs = np.asarray(snapshot.hubs[at], dtype=np.float32)
                whole_hubs = np.asarray(snapshot.hubs[count + at], dtype=np.float32)
                skill_hubs = np.asarray(snapshot.hubs[2 * count + rows], dtype=np.float32)
            else:  # an older snapshot, or other references: computed here, kept per version
                whole_hubs = np.zeros(len(at), dtype=np.float32)
                skill_hubs = np.zeros(len(rows), dtype=np.float32)
                placed = np.zeros((len(at), width), dtype=np.float32)
                for j, position in enumerate(at):
                    pk = snapshot.ids[int(position)]
                    agent_hubs[j], row_hubs = self._hubs(
                        pk, int(snapshot.seqs[position]), snapshot.rows(int(position)), refs
                    )
                    whole_hubs[j] = row_hubs[0]
                    placed[j, : len(row_hubs) - 1] = row_hubs[1:]
                skill_hubs = placed[present]
            whole -= row_weight * (whole_hubs - center)
            skills[present] -= row_weight * (skill_hubs - center)
        if width:
            best_skill = np.argmax(skills, axis=1)
            best = np.maximum(whole, skills[np.arange(len(at)), best_skill])
            best_skill[counts == 0] = -1
        else:
            best_skill, best = np.full(len(at), -1, dtype=np.int64), whole
        back = np.empty_like(order)
        back[order] = np.arange(len(order))  # to the order of at_list
        return best[back].astype(np.float64), best_skill[back], agent_hubs[back].astype(np.float64)

    def _hubs(
        self, pk: uuid.UUID, seq: int, rows: np.ndarray, refs: np.ndarray | None
    ) -> tuple[float, np.ndarray]:
        """(the agent's hubness, its rows') for rows the snapshot has no stored values for."""
        if refs is None:
            return 0.0, np.zeros(len(rows), dtype=np.float32)
        key = (pk, seq)
        found = self.hubs.get(key)
        if found is None:
            if len(self.hubs) > HUBS_CACHED:  # rows rewritten many times over: start again
                self.hubs = {}
            found = self.hubs[key] = (hubs.hubness(rows, refs), hubs.row_hubness(rows, refs))
        return found


def new_graph(dtype: str | None = None) -> Any:
    """An empty HNSW graph with the snapshot's settings (rows of ``DIM``, inner product), of
    :data:`GRAPH_DTYPE` rows unless ``dtype`` says otherwise."""
    load_runtime_first()
    from usearch.index import Index

    kind = dtype or GRAPH_DTYPE
    return Index(ndim=DIM, metric="ip", dtype=kind, connectivity=16, expansion_add=128)


def agents_by_best_row(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For graph rows ``keys`` given best first: each agent once (its snapshot position), best
    first, and where in ``keys`` its best row is."""
    agents, first = np.unique(np.asarray(keys, dtype=np.int64) // KEY_SPAN, return_index=True)
    order = np.argsort(first)
    return agents[order], first[order]


def _best(scores: np.ndarray) -> tuple[float, int]:
    """(the best of an agent's row scores, its best skill's position or -1)."""
    top = float(scores.max())
    skill = int(np.argmax(scores[1:])) if len(scores) > 1 else -1
    return top, skill


_index: VectorIndex | None = None
_index_lock = threading.Lock()


def index() -> VectorIndex:
    """This process's index (created on first use)."""
    global _index
    if _index is None:
        with _index_lock:
            if _index is None:
                _index = VectorIndex()
    return _index


def reset() -> None:
    """Drop this process's index (tests; the next use reads everything again)."""
    global _index
    with _index_lock:
        _index = None


# --- writing a snapshot (the worker) ---------------------------------------------------------


def save_snapshot(*, threads: int = 0) -> int:
    """Write a new snapshot of every stored vector and make it current; returns its size.

    Starts from the current snapshot when there is one (only changed rows are added to the
    graph), from nothing otherwise. Older snapshots are removed, but the one before stays for
    processes still reading it.
    """
    load_runtime_first()
    from usearch.index import Index

    directory = _directory()
    directory.mkdir(parents=True, exist_ok=True)
    started = time.time()
    # Rows older than the window are all committed: a reader may start after them.
    floor = (
        AgentEmbedding.objects.filter(updated_at__lt=_aware(started - WINDOW_SECONDS))
        .aggregate(top=Max("seq"))
        .get("top")
        or 0
    )
    base = _Snapshot.open(_current_name() or "") if _current_name() else None
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
    graph = new_graph()
    if base is not None and base.graph is not None and len(base.ids):
        restored = Index.restore(str(directory / base.name / "graph.usearch"))  # writable copy
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
    target = directory / name
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
    _make_current(directory, name)
    keep = {name, base.name if base else ""}
    _publish(target, keep)
    for old in directory.iterdir():
        if old.is_dir() and old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    logger.info("vector index snapshot %s: %d agents, %d rows changed", name, len(ids), len(keys))
    return len(ids)


def _hub_signature_now() -> str:
    """The signature :func:`_save_hubs` would store now ("" where the model is not available)."""
    from cards.embedding import model

    try:
        return hubs.signature() if model.available() else ""
    except model.Unavailable:
        return ""


def _save_hubs(path: Path, matrix: np.ndarray, skills: np.ndarray, counts: list[int]) -> str:
    """Write every agent's and every row's hubness (the layout of ``_Snapshot.hubs``); returns
    the references' signature, or "" (and an empty file) where the model is not available."""
    from cards.embedding import model

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
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC)


def ids_with_vectors(ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    current = index()
    current.refresh()
    return {pk for pk in ids if pk in current.delta or pk in current.snapshot.position}

"""The process-wide vector index: nearest agents to a query vector, and exact cosines.

Each agent has several vectors: its whole text's (row 0) and one per skill; its similarity to a
need is the best of them (a card's best skill, not its average: :mod:`search.index.scoring`).

``AgentEmbedding`` rows in the database are the source of truth. The index a process uses has
two parts:

- a **snapshot** (:mod:`search.index.snapshot`): a usearch HNSW graph of every row (it finds
  the candidates) and the rows themselves, in files under ``REGISTRY_EMBEDDING_DIR`` written by
  the worker (:mod:`search.index.writing`, run by the beat task ``cards.save_vector_index`` and
  by ``manage.py reembed``) and published through the database to other machines
  (:mod:`search.index.publishing`). Processes open it memory-mapped, so the web workers of a
  machine share its pages;
- a **delta**: the rows written since the snapshot, read from the database by ``seq`` at most
  once a second (:data:`REFRESH_SECONDS`) and scanned exactly (they are few).

Commits can land out of ``seq`` order (two workers), so each refresh looks again at the rows of
the last ``WINDOW_SECONDS`` seconds and keeps those it has not applied. A newer snapshot is
picked up by the same refresh. Without a snapshot everything is delta: an exact scan, which is
what small registries (``make run``, tests) use.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from registry import metrics
from search.embedding import hubs
from search.embedding.model import DIM, NAME
from search.embedding.store import stored_rows
from search.index.publishing import fetch, published_name
from search.index.scoring import best_of, snapshot_scores
from search.index.snapshot import (
    KEY_SPAN,
    WINDOW_SECONDS,
    Snapshot,
    agents_by_best_row,
    built_at,
    current_name,
)
from search.models import AgentEmbedding

REFRESH_SECONDS = 1.0
ROWS_PER_AGENT_ASKED = 3  # rows asked of the graph per agent wanted (an agent has 4.3 rows)
HUBS_CACHED = 1_000_000  # hubness values kept per process (agents and versions not in a snapshot)


class VectorIndex:
    """One process's view of every agent's vector (see the module's docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot = Snapshot()
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
            name = current_name()
            published = published_name()
            if published is not None and published != name and published != self.snapshot.name:
                # A newer snapshot written on another machine (or this one's lost its files).
                if fetch(published):
                    name = published
            if not self.loaded or (name is not None and name != self.snapshot.name):
                self._open(name)
            self._catch_up(now)

    def _open(self, name: str | None) -> None:
        snapshot = Snapshot.open(name) if name else None
        self.snapshot = snapshot or Snapshot()
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
        embedded references of :mod:`search.embedding.hubs`), a row's score is its cosine less
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
        if not delta:  # the usual case: each agent is the snapshot's, or has no vector
            found_at = [position.get(pk) for pk in ids]
            where = [i for i, at in enumerate(found_at) if at is not None]
            at_list = [at for at in found_at if at is not None]
        # A UUID's hash is computed in Python: no look-up in an empty delta (above).
        for i, pk in enumerate(ids if delta else ()):
            entry = delta.get(pk)
            if entry is not None:
                seq, rows = entry
                agent_hub, row_hubs = self._hubs(pk, seq, rows, refs)
                row_scores = rows @ query
                if refs is not None:
                    row_scores -= row_weight * (row_hubs - center)
                best[i], skill[i] = best_of(row_scores)
                hub[i], has[i] = agent_hub, True
                continue
            at = position.get(pk)
            if at is not None:
                at_list.append(at)
                where.append(i)
        if at_list:
            found = np.asarray(where, dtype=np.int64)
            best[found], skill[found], hub[found] = snapshot_scores(
                self.snapshot, query, at_list, refs, row_weight, center, self._hubs
            )
            has[found] = True
        return best, skill, hub, has

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


def ids_with_vectors(ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    current = index()
    current.refresh()
    return {pk for pk in ids if pk in current.delta or pk in current.snapshot.position}

"""Scoring agents against a need's vector: each agent's best row, less its rows' hubness.

An agent's score is the best of its rows' scores (its whole text's and each skill's: a card's
best skill, not its average). Without references a row's score is its cosine; with them (the
embedded references of :mod:`search.embedding.hubs`), its cosine less ``row_weight`` times the
row's hubness above ``center``. :func:`snapshot_scores` scores agents of a snapshot together,
with no loop over their rows; :class:`search.index.vectors.VectorIndex` scores the rows written
since one by itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import numpy as np

from search.embedding import hubs
from search.index.snapshot import Snapshot, float32_rows

# (agent, seq, its rows, references) -> (its hubness, its rows'): computed where not stored.
HubsOf = Callable[[uuid.UUID, int, np.ndarray, np.ndarray | None], tuple[float, np.ndarray]]


def best_of(scores: np.ndarray) -> tuple[float, int]:
    """(the best of an agent's row scores, its best skill's position or -1)."""
    top = float(scores.max())
    skill = int(np.argmax(scores[1:])) if len(scores) > 1 else -1
    return top, skill


def snapshot_scores(
    snapshot: Snapshot,
    query: np.ndarray,
    at_list: list[int],
    refs: np.ndarray | None,
    row_weight: float,
    center: float,
    hubs_of: HubsOf,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best score, best skill or -1, hubness) of the snapshot agents at ``at_list``, in that
    order; ``hubs_of`` gives the hubness of an agent whose values the snapshot did not store
    for these references."""
    order = np.argsort(at_list)  # reading the memory maps in order
    at = np.asarray(at_list, dtype=np.int64)[order]
    whole = np.asarray(snapshot.matrix[at], dtype=np.float32) @ query
    low = snapshot.offsets[at]
    counts = snapshot.offsets[at + 1] - low
    width = int(counts.max()) if len(counts) else 0
    present = np.arange(width)[None, :] < counts[:, None]  # agents x skill slots
    rows = (low[:, None] + np.arange(width)[None, :])[present]
    skills = np.full((len(at), width), -np.inf, dtype=np.float32)
    skills[present] = float32_rows(snapshot.skills[rows]) @ query
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
                agent_hubs[j], row_hubs = hubs_of(
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

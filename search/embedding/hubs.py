"""Hubness: how much an agent attracts needs in general, whatever they ask.

Some cards (a few words, generic phrasing, a name list) sit close to almost every need in the
model's space and come first for needs they do not serve. An agent's **hubness** is the mean of
its :data:`TOP` best cosines (its best row each time) to :data:`REFERENCES`, a fixed set of
everyday needs from every walk of life, written for this purpose (none of them from the quality
sets of bench/queries/). A **row's hubness** is the same for one of its vectors alone (its
whole text's or one skill's): a generic skill is a hub even when the agent's other skills are
narrow, and an agent with many narrow skills is not one just because it has many.
:mod:`search.semantic` subtracts a share of both from the cosine to the need
(docs/search.md, "Ranking"). The references are embedded once per process, on first use, by the
same model as everything else; the worker also stores every row's hubness in the vector index's
snapshot (:func:`profile`), so web processes only compute it for rows newer than the snapshot.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from search.embedding import model

REFERENCES = (
    "book a table for two at an Italian restaurant tonight",
    "what time does the pharmacy on my street close",
    "write a cover letter for a nursing job",
    "how do I reset my router password",
    "plan a three day trip to Kyoto",
    "find me a cheap flight to Madrid in March",
    "summarise this research paper for me",
    "help me fix a bug in my Python script",
    "what is the capital of Australia",
    "recommend a thriller novel",
    "how many calories are in a banana",
    "draft a polite email declining a meeting",
    "remind me to call my mother on Sunday",
    "what's a good workout for lower back pain",
    "create a budget spreadsheet for my household",
    "translate this sentence into Spanish",
    "explain how vaccines work to a child",
    "which laptop should I buy for video editing",
    "order a pizza to my office",
    "what are the symptoms of the flu",
    "generate a logo for my bakery",
    "compare two mortgage offers",
    "write a birthday poem for my sister",
    "how do I grow tomatoes on a balcony",
    "set up a weekly team meeting in my calendar",
    "find a plumber available tomorrow morning",
    "what's the score of the basketball game",
    "help me learn basic French phrases",
    "analyse the sales numbers in this spreadsheet",
    "tell me the news about the election",
    "convert this PDF into a Word file",
    "how long should I boil an egg",
    "check my essay for grammar mistakes",
    "suggest names for a golden retriever puppy",
    "what is the weather like in Oslo",
    "write SQL to count users by country",
    "how do I file an insurance claim after a car accident",
    "recommend a podcast about history",
    "find a yoga class near me",
    "explain the difference between stocks and bonds",
    "design a database schema for a library",
    "schedule a doctor's appointment",
    "what movies are playing this weekend",
    "help me write a speech for a wedding",
    "track the delivery of my order",
    "how can I improve my sleep",
    "make a shopping list for a week of vegetarian dinners",
    "deploy my web app to the cloud",
    "what does this error message mean",
    "give me ideas for a science fair project",
    "rent a car at the airport",
    "how much tax do I owe on freelance income",
    "find a quiet cafe to work from",
    "organise the photos on my phone",
    "write a product description for handmade soap",
    "what's the best way to learn the guitar",
    "cancel my gym membership",
    "check if this website is safe",
    "make a playlist for a road trip",
    "how do I negotiate a higher salary",
    "draw a cartoon of a cat wearing a hat",
    "monitor my server's uptime",
    "apply for a passport renewal",
    "what are fun things to do with kids on a rainy day",
)
TOP = 8  # an agent's hubness: the mean of its best TOP cosines to the references

_lock = threading.Lock()
_matrix: dict[str, np.ndarray] = {}


def references() -> np.ndarray:
    """The references' vectors (len(REFERENCES) x DIM), embedded once per process and model."""
    key = model.model_id()
    found = _matrix.get(key)
    if found is None:
        with _lock:
            found = _matrix.get(key)
            if found is None:
                found = model.embed(list(REFERENCES))
                found.setflags(write=False)
                _matrix[key] = found
    return found


def signature() -> str:
    """What stored hubness values depend on: the model, the references and :data:`TOP`."""
    text = "\x00".join([model.model_id(), str(TOP), *REFERENCES])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _top_mean(similarities: np.ndarray) -> np.ndarray:
    """Per row of ``similarities`` (rows x references): the mean of its TOP largest values."""
    top = min(TOP, similarities.shape[1])
    cut = similarities.shape[1] - top
    return np.partition(similarities, cut, axis=1)[:, cut:].mean(axis=1).astype(np.float32)


def row_hubness(rows: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """The hubness of each row alone (one value per row)."""
    if not len(rows) or not len(refs):
        return np.zeros(len(rows), dtype=np.float32)
    return _top_mean(np.asarray(rows, dtype=np.float32) @ refs.T)


def profile(
    rows: np.ndarray, starts: np.ndarray, refs: np.ndarray, *, chunk: int = 20000
) -> tuple[np.ndarray, np.ndarray]:
    """(each agent's hubness, each row's) for ``rows`` grouped by agent: agent ``i`` owns the
    rows from ``starts[i]`` to the next start (every agent has at least one row). Worked in
    chunks of about ``chunk`` rows, for a whole snapshot."""
    count = len(starts)
    agent = np.zeros(count, dtype=np.float32)
    row = np.zeros(len(rows), dtype=np.float32)
    if not count or not len(refs):
        return agent, row
    bounds = np.append(starts, len(rows))
    first = 0
    while first < count:
        last = int(np.searchsorted(bounds, bounds[first] + chunk, side="right")) - 1
        last = min(max(last, first + 1), count)
        low, high = int(bounds[first]), int(bounds[last])
        similarities = np.asarray(rows[low:high], dtype=np.float32) @ refs.T
        row[low:high] = _top_mean(similarities)
        best = np.maximum.reduceat(similarities, bounds[first:last] - low, axis=0)
        agent[first:last] = _top_mean(best)
        first = last
    return agent, row


def hubness(rows: np.ndarray, refs: np.ndarray) -> float:
    """The hubness of an agent whose vectors are ``rows`` (its best row for each reference)."""
    if not len(rows) or not len(refs):
        return 0.0
    return float(_top_mean((rows @ refs.T).max(axis=0)[None, :])[0])

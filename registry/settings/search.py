"""Semantic search (docs/search.md)."""

from __future__ import annotations

from pathlib import Path

from registry.env import ConfigError, env_int, env_str
from registry.settings.base import BASE_DIR

# auto: embed agents and rank `mode=semantic` searches when the model package is installed
# (lexical otherwise, said once in the log); off: always lexical.
REGISTRY_EMBEDDINGS = env_str("REGISTRY_EMBEDDINGS", "auto").lower()
if REGISTRY_EMBEDDINGS not in ("auto", "off"):
    raise ConfigError(f"REGISTRY_EMBEDDINGS must be auto or off (got {REGISTRY_EMBEDDINGS!r})")
# Tokens of an agent's text the model reads (at most 128, what it was trained on); fewer is
# faster to embed at ingest (docs/search.md, "Speed").
REGISTRY_EMBEDDING_MAX_TOKENS = env_int("REGISTRY_EMBEDDING_MAX_TOKENS", 80, minimum=16)
# Threads the model and numpy's matrix products may use in one process (1 per worker process
# suits a small machine; search/embedding/threads.py).
REGISTRY_EMBEDDING_THREADS = env_int("REGISTRY_EMBEDDING_THREADS", 1, minimum=1)
# Where the converted model and the vector index snapshot are kept (a cache: safe to delete).
REGISTRY_EMBEDDING_DIR = Path(
    env_str("REGISTRY_EMBEDDING_DIR", str(BASE_DIR / "var" / "embedding"))
)

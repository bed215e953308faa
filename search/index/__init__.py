"""The vector index: every agent's vectors, searched by nearest neighbour (docs/search.md).

- :mod:`search.index.vectors`: one process's index (a snapshot and the rows written since),
  nearest agents to a need's vector and their exact scores;
- :mod:`search.index.scoring`: an agent's score, its best row less the rows' hubness;
- :mod:`search.index.snapshot`: a snapshot's files, opened memory-mapped, and which is current;
- :mod:`search.index.writing`: the worker writes a new snapshot;
- :mod:`search.index.publishing`: the snapshot through PostgreSQL, for other machines.
"""

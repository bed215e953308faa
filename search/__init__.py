"""Search: agents found by words and ranked by meaning (docs/search.md, DESIGN.md "Search").

``cards`` keeps the agents, their cards and the read gate; this app chooses and ranks them:

- :mod:`search.filters`: the v1 search parameters (``AgentSearch``) and the filters they stand
  for, by SQL on indexed columns (``mode=lexical``'s full text among them);
- :mod:`search.semantic`: agents ranked by how well they serve a need said in words, fusing the
  cosine (:mod:`search.index`) with the need's words (:mod:`search.lexical`);
- :mod:`search.matches`: a ranked agent and what it says about its rank;
- :mod:`search.request_frame`: the words around a need that ask for an agent;
- :mod:`search.door_metrics`: searches counted and timed at the door that answered them;
- :mod:`search.embedding`: the model, the texts it embeds and the stored vectors;
- :mod:`search.index`: the process-wide vector index and its snapshot;
- :mod:`search.models`: the vectors' and snapshots' tables; :mod:`search.tasks` and
  ``manage.py reembed``: embedding and writing snapshots.

``cards`` never imports this app: a crawl that stored new text tells ``cards.hooks.text_changed``,
which :mod:`search.apps` answers by queueing the embedding.
"""

"""Crawling one agent: fetch, check, verify, store, index, and record the outcome.

Every outcome lands on the agent row (status, health, last error, timings, next crawl) and as a
``CrawlAttempt``; nothing important lives only in logs. Network work (the card, JWKS documents)
happens before the transaction that writes, so no row lock is held while waiting on a server.

- :mod:`cards.crawling.crawl`: one agent's crawl (:func:`agent_crawl`), its manifest first;
- :mod:`cards.crawling.manifests`: an origin's ARD manifest recorded, deferred or withdrawn;
- :mod:`cards.crawling.ingest`: a fetched card stored (:func:`card_ingest`);
- :mod:`cards.crawling.not_modified`: a 304, the stored card verified again;
- :mod:`cards.crawling.attempts`: the attempt row and a failure, for every outcome.
"""

from __future__ import annotations

from cards.crawling.crawl import DEFERRED, agent_crawl, crawl_target
from cards.crawling.ingest import card_ingest

__all__ = ["DEFERRED", "agent_crawl", "card_ingest", "crawl_target"]

"""Every crawl of one agent counted by outcome and timed (``registry_crawls_total``,
``registry_crawl_duration_seconds``: registry/metrics.py), whoever runs it: the crawl tasks,
imports, management commands.

The outcome is what :func:`cards.crawling.agent_crawl` returns (``stored``, ``unchanged``,
``not-modified``, ``manifest``, ``inline``, ``error``, ``missing``), or what it raised: a
failure worth retrying (``transient-error``, recorded on the agent and retried by the task), the
task's time limit (``timeout``), anything else (``exception``: the database went away, a bug).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from celery.exceptions import SoftTimeLimitExceeded

from cards.services import TransientCrawlError
from registry import metrics

P = ParamSpec("P")


def observed_crawl(crawl: Callable[P, str]) -> Callable[P, str]:
    """``crawl``, each call counted by its outcome and timed."""

    @functools.wraps(crawl)
    def observed(*args: P.args, **kwargs: P.kwargs) -> str:
        with metrics.crawl_observed() as seen:
            try:
                seen["outcome"] = crawl(*args, **kwargs)
            except TransientCrawlError:
                seen["outcome"] = "transient-error"
                raise
            except SoftTimeLimitExceeded:
                seen["outcome"] = "timeout"
                raise
            return seen["outcome"]

    return observed

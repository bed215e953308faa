"""The beat's schedule: the periodic tasks, at the intervals their settings give."""

from __future__ import annotations

from registry.settings.crawling import REGISTRY_SWEEP_INTERVAL_SECONDS
from registry.settings.live import REGISTRY_LIVE_SWEEP_SECONDS
from registry.settings.publishing import REGISTRY_ORIGIN_RECHECK_SECONDS

CELERY_BEAT_SCHEDULE = {
    "sweep-due-crawls": {"task": "cards.sweep_due", "schedule": REGISTRY_SWEEP_INTERVAL_SECONDS},
    "prune-crawl-attempts": {"task": "cards.prune_history", "schedule": 86400.0},
    # The vector index snapshot the web processes open (docs/search.md); cheap when unchanged.
    "save-vector-index": {"task": "cards.save_vector_index", "schedule": 300.0},
    # Live checks of agents whose card was read since their last check (docs/live-checks.md).
    "sweep-due-live-checks": {"task": "live.sweep", "schedule": REGISTRY_LIVE_SWEEP_SECONDS},
    # Re-checks of proven origins that are due (docs/publishers.md, "Proof of an origin").
    "recheck-due-origins": {
        "task": "publishers.recheck_due_origins",
        "schedule": REGISTRY_ORIGIN_RECHECK_SECONDS,
    },
}

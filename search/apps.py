from __future__ import annotations

from django.apps import AppConfig

from cards import hooks
from search.embedding import pending


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = "Search by words and by meaning"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A crawl or a manifest that stored new text has its agents embedded once it commits.
        hooks.register_text_changed(pending.embed_after_commit)
        # Services queue the embedding tasks by name (cards.queue): register them in every
        # process, web ones included.
        from search import tasks  # noqa: F401  # lazy: they import models (apps not ready)

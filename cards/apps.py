from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_save


def _agent_saved(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    if raw:  # loaddata: rows as given, documents rendered by the command afterwards
        return
    from cards.rendering.store import agent_changed  # lazy: imports models (apps not ready)

    agent_changed(instance.pk)


class CardsConfig(AppConfig):
    name = "cards"
    verbose_name = "Agents and cards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cards.models import Agent  # lazy: models are importable once apps are ready

        # Every saved agent gets its public documents re-rendered in the same transaction.
        post_save.connect(_agent_saved, sender=Agent, dispatch_uid="cards-render-documents")
        # Services queue tasks by name (cards.queue): register them in every process, web ones
        # included; and the registry-wide gauges every scrape of /metrics reads
        # (docs/operations.md).
        from cards import metrics_gauges, tasks  # noqa: F401  # lazy: they import models

        metrics_gauges.register()

from __future__ import annotations

from django.apps import AppConfig


class PublishersConfig(AppConfig):
    name = "publishers"
    verbose_name = "Publishers, tokens and proven origins"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cards import hooks
        from publishers import ownership  # imports models: only once apps are ready

        # A crawl that finds a card on a proven origin gives the agent to its publisher.
        hooks.register_publisher_lookup(ownership.publisher_of)

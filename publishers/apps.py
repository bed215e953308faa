from __future__ import annotations

from django.apps import AppConfig

from cards import hooks


class PublishersConfig(AppConfig):
    name = "publishers"
    verbose_name = "Publishers, tokens and proven origins"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from publishers import ownership  # lazy: it imports models, loaded only now

        # A crawl that finds a card on a proven origin gives the agent to its publisher.
        hooks.register_publisher_lookup(ownership.publisher_of)

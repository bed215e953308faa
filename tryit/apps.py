from __future__ import annotations

from django.apps import AppConfig


class TryItConfig(AppConfig):
    name = "tryit"
    verbose_name = "Try a skill from its schema"

    def ready(self) -> None:
        # lazy: AppConfig.ready: the apps are loaded only now
        from cards import hooks
        from tryit import page

        hooks.register_agent_page_section(page.section)

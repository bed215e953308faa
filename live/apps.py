from __future__ import annotations

from django.apps import AppConfig

from cards import hooks


class LiveConfig(AppConfig):
    name = "live"
    verbose_name = "Live conformance checks"

    def ready(self) -> None:
        from live import proofs, tasks  # lazy: they import models, loaded only now

        hooks.register_after_crawl(tasks.after_crawl)
        hooks.register_action_guard(proofs.guard)  # opting in to messages needs the proofs

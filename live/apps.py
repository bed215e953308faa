from __future__ import annotations

from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "live"
    verbose_name = "Live conformance checks"

    def ready(self) -> None:
        from cards import hooks
        from live import proofs, tasks

        hooks.register_after_crawl(tasks.after_crawl)
        hooks.register_action_guard(proofs.guard)  # opting in to messages needs the proofs

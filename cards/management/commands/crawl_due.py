from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from cards.tasks import sweep


class Command(BaseCommand):
    help = "Claim the agents that are due and queue their crawls (what the beat sweep does)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, default=None, help="At most this many agents.")

    def handle(self, *args: Any, limit: int | None, **options: Any) -> None:
        queued = sweep(limit=limit)
        self.stdout.write(f"{queued} crawl(s) queued")

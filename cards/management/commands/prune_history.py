from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from cards.scheduling import prune_attempts


class Command(BaseCommand):
    help = "Delete crawl attempts older than the retention period (default 90 days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=settings.REGISTRY_ATTEMPT_RETENTION_DAYS)

    def handle(self, *args: Any, days: int, **options: Any) -> None:
        self.stdout.write(f"{prune_attempts(older_than_days=days)} attempt(s) deleted")

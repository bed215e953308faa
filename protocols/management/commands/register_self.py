"""Submit the registry's own agent card (REGISTRY_BASE_URL or --base-url) for crawling."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from protocols.services import own_card_submit
from registry.errors import ProblemError


class Command(BaseCommand):
    help = "Submit the registry's own card at /.well-known/agent-card.json so it is indexed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default=None, help="Defaults to REGISTRY_BASE_URL.")

    def handle(self, *args: Any, **options: Any) -> None:
        base = options["base_url"] or settings.REGISTRY_BASE_URL
        if not base:
            raise CommandError("set REGISTRY_BASE_URL or pass --base-url")
        try:
            agent, created = own_card_submit(base_url=base)
        except ProblemError as exc:
            raise CommandError(exc.detail) from None
        state = "submitted" if created else "already registered"
        self.stdout.write(f"{state}: {agent.pk} {agent.url}")

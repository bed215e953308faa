from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cards.models import Agent
from cards.services import enqueue_crawl
from cards.url_form import normalise_fetched


class Command(BaseCommand):
    help = "Queue a crawl of one agent (by id or URL) or of every agent (--all)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", nargs="?", help="Agent id or submitted URL.")
        parser.add_argument("--all", action="store_true", help="Every agent.")

    def handle(self, *args: Any, agent: str | None, all: bool, **options: Any) -> None:
        if all == (agent is not None):
            raise CommandError("give one agent, or --all")
        if all:
            ids = list(Agent.objects.values_list("pk", flat=True))
        else:
            # The URL in any spelling: agents are stored under its normal form.
            urls = {agent, normalise_fetched(agent)} if agent else set()
            found = Agent.objects.filter(url__in=urls).values_list("pk", flat=True).first()
            if found is None:
                try:
                    found = Agent.objects.filter(pk=str(agent)).values_list("pk", flat=True).first()
                except Exception:  # not a UUID
                    found = None
            if found is None:
                raise CommandError(f"no agent {agent!r}")
            ids = [found]
        queued = sum(1 for agent_id in ids if enqueue_crawl(agent_id))
        self.stdout.write(f"{queued} crawl(s) queued")

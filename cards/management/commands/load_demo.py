from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from cards.crawling import card_ingest
from cards.models import Agent
from registry.http import FetchResult

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"


class Command(BaseCommand):
    help = "Load the demo agents (cards/demo/*.json) so a new registry has something to search."

    def handle(self, *args: Any, **options: Any) -> None:
        for path in sorted(DEMO_DIR.glob("*.json")):
            url = f"https://{path.stem}.demo.example/.well-known/agent-card.json"
            body = path.read_bytes()
            # Demo agents live on a reserved name: they are ingested from disk and never crawled.
            agent, _ = Agent.objects.get_or_create(url=url, defaults={"card_url": url})
            result = FetchResult.local(url, body)
            outcome = card_ingest(agent_id=agent.pk, result=result)
            Agent.objects.filter(pk=agent.pk).update(next_crawl_at=None)
            self.stdout.write(f"{outcome:>9}  {agent.pk}  {path.stem}")

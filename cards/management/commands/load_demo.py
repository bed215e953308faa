from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from cards.crawling import card_ingest
from cards.models import Agent, CrawlAttempt
from cards.rendering.store import agent_changed
from registry.http import FetchResult

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
# Every demo agent's description ends with this: the data says it is demo data.
DEMO_NOTE = "(Demo data: an example agent on a reserved name; the registry never fetches it.)"


def _observed_nothing(agent_id: Any) -> None:
    """Undo what ingesting from disk would claim was observed: no fetch happened, so no health,
    no HTTP status, no fetch time, no uptime (no crawl attempts) and no next crawl."""
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent_id)
        CrawlAttempt.objects.filter(agent=agent).delete()
        description = agent.description.removesuffix(DEMO_NOTE).rstrip()
        Agent.objects.filter(pk=agent_id).update(
            description=f"{description} {DEMO_NOTE}".strip(),
            health=Agent.Health.UNKNOWN,
            last_http_status=None,
            last_crawled_at=None,
            last_success_at=None,
            fetch_ms=None,
            next_crawl_at=None,
            consecutive_failures=0,
            gone_since=None,
        )
        agent_changed(agent_id)


class Command(BaseCommand):
    help = (
        "Load the demo agents (cards/demo/*.json) so a new registry has something to search. "
        "They are marked as demo data and show 'not checked yet': nothing was fetched."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for path in sorted(DEMO_DIR.glob("*.json")):
            url = f"https://{path.stem}.demo.example/.well-known/agent-card.json"
            body = path.read_bytes()
            # Demo agents live on a reserved name: they are ingested from disk and never crawled.
            agent, _ = Agent.objects.get_or_create(url=url, defaults={"card_url": url})
            result = FetchResult.local(url, body)
            outcome = card_ingest(agent_id=agent.pk, result=result)
            _observed_nothing(agent.pk)
            self.stdout.write(f"{outcome:>9}  {agent.pk}  {path.stem}")

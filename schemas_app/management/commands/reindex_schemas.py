"""Rebuild the schema index from each agent's latest stored card (no fetching).

    python manage.py reindex_schemas [--agent UUID]

For agents ingested before schemas_app existed, or after a change to the extraction rules.
Records no compatibility verdicts (nothing is compared between snapshots here).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import F

from cards.models import Agent
from schemas_app.services import index_agent_schemas


class Command(BaseCommand):
    help = "Rebuild the schema index from the agents' latest stored cards."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--agent", help="Only this agent (UUID).")

    def handle(self, *args: Any, **options: Any) -> None:
        agents = Agent.objects.filter(latest_snapshot__isnull=False).select_related(
            "latest_snapshot"
        )
        if options.get("agent"):
            agents = agents.filter(pk=options["agent"])
        done = 0
        for agent in agents.iterator(chunk_size=200):
            card = agent.latest_snapshot.card if agent.latest_snapshot else None
            if not isinstance(card, dict):
                continue
            with transaction.atomic():
                index_agent_schemas(agent=agent, card=card, snapshot=None)
                # A new version of the agent's row: pages kept for the old one
                # (cards/catalogue/page_cache.py) showed the old schema rows.
                Agent.objects.filter(pk=agent.pk).update(url=F("url"))
            done += 1
        self.stdout.write(f"reindexed the schemas of {done} agent(s)")

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from cards.ard import identifiers
from cards.models import Agent


class Command(BaseCommand):
    help = (
        "Give every agent that has a card but no ARD identifier its derived one "
        "(urn:air:<card host>:a2a:<name>); a crawl does this by itself, bulk loads may not."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        rows = Agent.objects.filter(ard_identifier__isnull=True).exclude(name="")
        ids = list(rows.order_by("created_at", "pk").values_list("pk", flat=True))
        given = 0
        for start in range(0, len(ids), 1000):
            chunk = Agent.objects.filter(pk__in=ids[start : start + 1000]).only(
                "pk", "card_url", "url", "name", "ard_identifier"
            )
            for agent in chunk:
                wanted = identifiers.derived(agent.card_url or agent.url, agent.name)
                if identifiers.assign(agent, wanted, source="derived"):
                    given += 1
            self.stdout.write(f"\r{min(start + 1000, len(ids))}/{len(ids)}", ending="")
        self.stdout.write(f"\n{given} identifiers given")
        if given and connection.vendor == "postgresql":
            # The planner's statistics still say the column is empty: searches that require
            # an identifier would pick a plan for "no rows" (measured: 11 ms -> 330 ms).
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE cards_agent")

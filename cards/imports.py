"""Bulk import: many URLs submitted and crawled by the workers in parallel, with progress.

Progress is reported in the Task Progress Metadata v1 shape (seed 002): one tracker per phase
(``list``, ``submit``, ``crawl``) and an aggregate. An item's state only moves forward, so the
counts, and therefore the progress, never go back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from cards import crawling, moderation, queue, services
from cards.discovery import origin_of
from cards.models import Agent, ImportItem, ImportJob
from registry import metrics
from registry.errors import ProblemError
from registry.http import FetchError, fetch

_OPEN = (ImportItem.Outcome.PENDING, ImportItem.Outcome.SUBMITTED)


def _bad_request(detail: str, pointer: str) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-request",
        title="Invalid import",
        detail=detail,
        errors=[{"pointer": pointer, "message": detail}],
    )


def urls_from_document(document: Any) -> list[str]:
    """Card URLs from a listing: ``[url, ...]``, ``{"urls": [...]}`` or ``{"agents": [...]}``."""
    if isinstance(document, dict):
        document = document.get("urls", document.get("agents"))
    if not isinstance(document, list):
        raise ValueError('expected a JSON list of URLs, {"urls": [...]} or {"agents": [...]}')
    urls: list[str] = []
    for entry in document:
        if isinstance(entry, dict):
            entry = entry.get("url")
        if isinstance(entry, str) and entry.strip():
            urls.append(entry.strip())
    return urls


def _check_count(urls: list[str], pointer: str, most: int) -> None:
    if not urls:
        raise _bad_request("the import lists no URL", pointer)
    if len(urls) > most:
        raise _bad_request(f"an import takes at most {most} URLs here", pointer)


def _create_items(job: ImportJob, urls: list[str], now: datetime) -> None:
    ImportItem.objects.bulk_create(
        [ImportItem(job=job, position=i, url=url[:4096]) for i, url in enumerate(urls)],
        batch_size=1000,
    )
    job.total = len(urls)
    job.listed_at = now
    job.save(update_fields=["total", "listed_at"])


def import_create(
    *, urls: Any = None, source_url: Any = None, user: Any, enqueue: bool = True
) -> ImportJob:
    """Create an import from a list of URLs, or from the URL of a document listing them."""
    if (urls is None) == (source_url is None):
        raise _bad_request('give either "urls" (a list) or "url" (a document listing them)', "")
    if urls is not None:
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise _bad_request("urls must be a list of strings", "/urls")
        for index, text in enumerate(urls):
            if "\x00" in text or len(text) > 2048:
                raise _bad_request(
                    "a URL holds at most 2048 characters and no NUL", f"/urls/{index}"
                )
        _check_count(urls, "/urls", settings.REGISTRY_IMPORT_INLINE_MAX_URLS)
    else:
        source_url = services.submitted_url_check(source_url)
    now = timezone.now()
    with transaction.atomic():
        job = ImportJob.objects.create(created_by=user, source_url=source_url or "")
        if urls is not None:
            _create_items(job, urls, now)
        if enqueue:
            transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def _enqueue(job_id: Any) -> None:
    if not queue.send("cards.process_import", str(job_id), priority=queue.ASKED):
        # Broker down: the job stays queued; `import_agents --resume` runs it.
        ImportJob.objects.filter(pk=job_id).update(error="the task queue was unreachable")


def listing_origin(*, job_id: Any) -> str | None:
    """The origin of the document an import still has to read its URLs from, if any."""
    row = ImportJob.objects.filter(pk=job_id, listed_at__isnull=True).values_list("source_url")
    source = row.first()
    return origin_of(source[0]) if source and source[0] else None


def import_list(*, job_id: Any) -> list[int]:
    """Start the job: read the source document if needed; returns the ids of items to process."""
    job = ImportJob.objects.get(pk=job_id)
    now = timezone.now()
    if job.started_at is None:
        job.started_at = now
    job.status = ImportJob.Status.RUNNING
    job.save(update_fields=["started_at", "status"])
    if job.listed_at is None:
        try:
            result = fetch(job.source_url)
            urls = urls_from_document(json.loads(result.body))
            _check_count(urls, "/url", settings.REGISTRY_IMPORT_MAX_URLS)
        except (FetchError, ValueError, ProblemError) as exc:
            detail = exc.detail if isinstance(exc, ProblemError) else str(exc)
            job.status = ImportJob.Status.FAILED
            job.error = f"could not read the list of URLs: {detail}"[:2000]
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "error", "finished_at"])
            metrics.IMPORT_JOBS.labels(outcome="failed").inc()
            return []
        _create_items(job, urls, timezone.now())
    ids = list(job.items.filter(outcome__in=_OPEN).values_list("id", flat=True))
    if not ids:
        _finish_if_done(job.pk)
    return ids


def import_item_submit(*, item_id: int) -> str | None:
    """The first step of one URL: submit it (or find its agent) under the job owner's rules.

    Returns the origin its crawl must take a turn at, or None when the item is finished
    (refused, or an agent the job's owner may not re-crawl) or was already finished."""
    item = ImportItem.objects.select_related("job", "agent").filter(pk=item_id).first()
    if item is None or item.outcome in ImportItem.TERMINAL:
        return None
    user = item.job.created_by
    if item.outcome == ImportItem.Outcome.PENDING:
        try:
            agent, created = services.agent_submit(url=item.url, user=user, enqueue=False)
        except ProblemError as problem:
            _set(item, ImportItem.Outcome.INVALID, problem.detail)
            return None
        item.agent, item.created = agent, created
        if not created and user is not None and not moderation.can_manage(user, agent):
            # The same rule as POST /agents/{id}/recrawl: only its owner or staff ask for a crawl.
            _set(
                item,
                ImportItem.Outcome.CRAWLED,
                "already registered by another account: not re-crawled",
            )
            return None
        _set(item, ImportItem.Outcome.SUBMITTED, "new agent" if created else "already registered")
    target = item.agent
    if target is None:
        _set(item, ImportItem.Outcome.FAILED, "the agent is gone")
        return None
    return origin_of(target.card_url or target.url)


def import_item_crawl(*, item_id: int) -> str:
    """The second step: crawl the item's agent (the caller holds the origin's turn)."""
    item = ImportItem.objects.select_related("job").filter(pk=item_id).first()
    if item is None or item.outcome in ImportItem.TERMINAL:
        return "skipped"
    try:
        outcome = crawling.agent_crawl(agent_id=item.agent_id)
    except services.TransientCrawlError as exc:
        # The agent stays due: the periodic sweep retries it with backoff.
        _set(item, ImportItem.Outcome.FAILED, f"{exc} (will be retried by the crawler)")
        return item.outcome
    if outcome == crawling.DEFERRED:
        detail = "deferred by the registry's per-destination limit (will be crawled later)"
        _set(item, ImportItem.Outcome.FAILED, detail)
        return item.outcome
    if outcome == "error":
        rows = Agent.objects.filter(id=item.agent_id) if item.agent_id else Agent.objects.none()
        error = rows.values_list("last_error", flat=True).first()
        _set(item, ImportItem.Outcome.FAILED, error or "the crawl failed")
    else:
        _set(item, ImportItem.Outcome.CRAWLED, outcome)
    return item.outcome


def import_item_process(*, item_id: int) -> str:
    """Both steps in one go, for the in-process mode (one process: no origin turns to share)."""
    if import_item_submit(item_id=item_id) is not None:
        import_item_crawl(item_id=item_id)
    outcome: str = ImportItem.objects.filter(pk=item_id).values_list("outcome", flat=True).get()
    return outcome


def _set(item: ImportItem, outcome: str, detail: str) -> None:
    item.outcome = outcome
    item.detail = detail[:2000]
    item.save(update_fields=["outcome", "detail", "agent", "created", "updated_at"])
    if outcome in ImportItem.TERMINAL:
        metrics.IMPORT_ITEMS.labels(outcome=outcome).inc()
        _finish_if_done(item.job_id)


def _finish_if_done(job_id: Any) -> None:
    if ImportItem.objects.filter(job_id=job_id, outcome__in=_OPEN).exists():
        return
    finished = (
        ImportJob.objects.filter(pk=job_id)
        .exclude(status__in=[ImportJob.Status.COMPLETED, ImportJob.Status.FAILED])
        .update(status=ImportJob.Status.COMPLETED, finished_at=timezone.now())
    )
    if finished:  # the one call that moved it: counted once, however many items end together
        metrics.IMPORT_JOBS.labels(outcome="completed").inc()


# --- progress ----------------------------------------------------------------------------------


def _rfc3339(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _tracker(
    tracker_id: str,
    progress: int,
    total: int,
    message: str,
    *,
    failed: bool = False,
    started: datetime | None,
    updated: datetime | None,
) -> dict[str, Any]:
    status = "failed" if failed else ("completed" if progress >= total and total > 0 else "running")
    tracker: dict[str, Any] = {
        "id": tracker_id,
        "progress": progress,
        "total": total,
        "message": message[:512],
        "status": status,
    }
    if started:
        tracker["startedAt"] = _rfc3339(started)
    if updated:
        tracker["updatedAt"] = _rfc3339(updated)
    return tracker


def outcome_counts(job: ImportJob) -> dict[str, int]:
    counts = {outcome: 0 for outcome in ImportItem.Outcome.values}
    for row in job.items.values("outcome").annotate(n=Count("id")):
        counts[row["outcome"]] = row["n"]
    return counts


def progress_document(job: ImportJob) -> dict[str, Any]:
    """The job's progress as a Task Progress Metadata v1 payload (seed 002, section 5)."""
    counts = outcome_counts(job)
    total = job.total
    done = counts["invalid"] + counts["crawled"] + counts["failed"]
    submitted = done + counts["submitted"]
    updated = job.items.aggregate(at=Max("updated_at"))["at"] or job.listed_at or job.created_at
    failed_listing = job.status == ImportJob.Status.FAILED and job.listed_at is None
    listing = _tracker(
        "list",
        1 if job.listed_at else 0,
        1,
        job.error if failed_listing else f"{total} URLs listed" if job.listed_at else "listing",
        failed=failed_listing,
        started=job.started_at or job.created_at,
        updated=job.listed_at or job.started_at,
    )
    trackers = [listing]
    if job.listed_at:
        trackers.append(
            _tracker(
                "submit",
                submitted,
                total,
                f"{submitted}/{total} submitted, {counts['invalid']} refused",
                started=job.started_at,
                updated=updated,
            )
        )
        trackers.append(
            _tracker(
                "crawl",
                done,
                total,
                f"{counts['crawled']} crawled, {counts['failed']} failed",
                started=job.started_at,
                updated=updated,
            )
        )
    aggregate = {
        "progress": done,
        "total": total,
        "message": f"{done} of {total} URLs processed",
    }
    return {"trackers": trackers, "aggregate": aggregate}

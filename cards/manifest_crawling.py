"""ARD manifests: find an origin's manifest, read it, and keep its agents in step (docs/ard.md).

Resolution order for a submitted origin (ARD 5.1): ``/.well-known/ard.json``, a ``rel="ard"``
link on the origin's home page, ``/.well-known/ai-catalog.json`` (and ``rel="ai-catalog"``);
only then the agent-card paths. Each A2A entry becomes an agent: a ``url`` entry is crawled like
any submitted card (through the safe fetcher), a ``data`` entry is ingested from the manifest.
An entry that disappears marks its agent (``manifest_listed=False``) and its history says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cards import queue
from cards.ard import identifiers
from cards.ard.manifest import AgentEntry, ManifestReport, finding, read
from cards.discovery import origin_of
from cards.indexing import search_text_of
from cards.models import Agent, AgentEvent, Manifest
from cards.rendering.store import agent_changed
from cards.services import enqueue_crawl, submitted_url_check
from registry.errors import ProblemError
from registry.http import FetchError, FetchPolicy, FetchResult, fetch

log = logging.getLogger(__name__)
WELL_KNOWN = (("/.well-known/ard.json", "well-known-ard"),)
FALLBACK = (("/.well-known/ai-catalog.json", "well-known-ai-catalog"),)
HOME_PAGE_BYTES = 256 * 1024


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "link":
            return
        values = {k.lower(): (v or "") for k, v in attrs}
        for rel in values.get("rel", "").lower().split():
            if rel in ("ard", "ai-catalog") and values.get("href"):
                self.found.setdefault(rel, values["href"])


def _links(origin: str, policy: FetchPolicy) -> dict[str, str]:
    """``rel="ard"`` and ``rel="ai-catalog"`` links on the origin's home page."""
    small = replace(policy, max_bytes=min(policy.max_bytes, HOME_PAGE_BYTES))
    try:
        page = fetch(origin + "/", policy=small, expect_json=False)
    except FetchError:
        return {}
    parser = _Links()
    try:
        parser.feed(page.body.decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - a broken page has no links
        return {}
    return {rel: urljoin(page.url, href) for rel, href in parser.found.items()}


@dataclass
class Found:
    """A manifest, or the failure to read one that is there (too large, wrong type, 5xx)."""

    url: str
    via: str
    result: FetchResult | None = None
    error: FetchError | None = None


def _try(url: str, via: str, policy: FetchPolicy) -> Found | None:
    try:
        result = fetch(url, policy=policy)
    except FetchError as err:
        if err.status in (404, 410):
            return None
        log.info("manifest candidate %s failed: %s", url, err.reason)
        return Found(url=url, via=via, error=err)
    return Found(url=result.url, via=via, result=result)


def resolve(origin: str, policy: FetchPolicy | None = None) -> Found | None:
    """The origin's manifest, in ARD's order; None when it publishes none."""
    policy = policy or FetchPolicy.from_settings()
    for path, via in WELL_KNOWN:
        found = _try(origin + path, via, policy)
        if found:
            return found
    links = _links(origin, policy)
    if "ard" in links:
        found = _try(links["ard"], "link-ard", policy)
        if found:
            return found
    for path, via in FALLBACK:
        found = _try(origin + path, via, policy)
        if found:
            return found
    if "ai-catalog" in links:
        return _try(links["ai-catalog"], "link-ai-catalog", policy)
    return None


def _event(agent: Agent, kind: str, detail: dict[str, Any]) -> None:
    """An entry in the agent's history, shown with its current snapshot."""
    AgentEvent.objects.create(
        agent=agent, snapshot_id=agent.latest_snapshot_id, kind=kind, detail=detail
    )


def _entry_agent(
    manifest: Manifest, entry: AgentEntry, report: ManifestReport, owner: Any
) -> tuple[Agent, bool] | None:
    pointer = f"/entries/{entry.index}"
    if entry.url is not None:
        try:
            url = submitted_url_check(urljoin(manifest.url, entry.url))
        except ProblemError as exc:
            report.findings.append(finding("ard.entry-url", "error", pointer + "/url", exc.detail))
            return None
    else:
        url = f"{manifest.url}#{entry.identifier or f'entry-{entry.index}'}"[:2048]
    agent = Agent.objects.filter(url=url).first()
    if agent is None:
        agent = Agent.objects.create(url=url, discover=False, submitted_by=owner)
        return agent, True
    if agent.manifest_id not in (None, manifest.pk):
        report.findings.append(
            finding(
                "ard.entry-elsewhere",
                "error",
                pointer,
                "another manifest already lists this agent; it stays with that one",
            )
        )
        return None
    return agent, False


def _give_identifier(agent: Agent, entry: AgentEntry, report: ManifestReport) -> None:
    if entry.identifier is None or agent.ard_identifier == entry.identifier:
        return
    pointer = f"/entries/{entry.index}/identifier"
    if agent.ard_identifier:
        report.findings.append(
            finding(
                "ard.identifier-kept",
                "info",
                pointer,
                f"the agent keeps its identifier {agent.ard_identifier}: identifiers are stable",
            )
        )
        return
    holder = identifiers.holder(entry.identifier)
    if holder is not None:
        report.findings.append(
            finding("ard.identifier-taken", "error", pointer, "another agent holds this identifier")
        )
        _event(agent, AgentEvent.Kind.ARD_IDENTIFIER_REFUSED, {"identifier": entry.identifier})
        return
    identifiers.assign(agent, entry.identifier, source="manifest")


def ingest(found: Found, *, owner: Any = None) -> tuple[Manifest, list[tuple[Any, FetchResult]]]:
    """Store the manifest and bring its agents in step; ``url`` entries are queued for a crawl.
    Returns the manifest and the inline cards (``data`` entries) for the caller to ingest.
    A manifest that cannot be read keeps what was stored before: its agents stay as they were."""
    now = timezone.now()
    url = found.url[:2048]
    manifest, _ = Manifest.objects.get_or_create(url=url, defaults={"origin": origin_of(url)})
    manifest.found_via = found.via
    manifest.last_crawled_at = now
    if found.result is None:
        reason = found.error.reason if found.error else "the manifest could not be fetched"
        manifest.status = "error"
        manifest.last_error = reason
        manifest.findings = [finding("ard.fetch", "error", "", reason).as_dict()]
        manifest.save()
        return manifest, []
    body = found.result.body
    report = read(body, manifest_url=url, max_entries=settings.REGISTRY_ARD_MAX_ENTRIES)
    to_crawl: list[Any] = []
    listed_ids: set[Any] = set()
    with transaction.atomic():
        if report.ok:
            listed = listed_ids
            for entry in report.agents:
                placed = _entry_agent(manifest, entry, report, owner)
                if placed is None:
                    continue
                agent, created = placed
                _give_identifier(agent, entry, report)
                was_delisted = agent.manifest_listed is False
                agent.manifest = manifest
                agent.manifest_listed = True
                agent.ard_entry = {
                    **entry.terms,
                    "capabilities": entry.capabilities,
                    "manifestUrl": manifest.url,
                    "inline": entry.data is not None,
                }
                agent.capabilities = entry.capabilities
                snapshot = agent.latest_snapshot
                card = snapshot.card if snapshot is not None else None
                agent.search_text = search_text_of(card, agent.ard_entry)
                agent.save(
                    update_fields=[
                        "manifest", "manifest_listed", "ard_entry", "capabilities",
                        "search_text", "updated_at",
                    ]
                )  # fmt: skip
                if was_delisted:
                    _event(
                        agent, AgentEvent.Kind.MANIFEST_ENTRY_RESTORED, {"manifest": manifest.url}
                    )
                listed.add(agent.pk)
                if entry.data is not None:
                    body = json.dumps(entry.data, ensure_ascii=False).encode()
                    to_crawl.append((agent.pk, FetchResult.local(manifest.url, body)))
                elif created or agent.status == Agent.Status.PENDING:
                    to_crawl.append((agent.pk, None))
                else:
                    agent_changed(agent.pk)
            gone = Agent.objects.filter(manifest=manifest, manifest_listed=True).exclude(
                pk__in=listed
            )
            for agent in gone:
                agent.manifest_listed = False
                agent.save(update_fields=["manifest_listed", "updated_at"])
                _event(agent, AgentEvent.Kind.MANIFEST_ENTRY_REMOVED, {"manifest": manifest.url})
                agent_changed(agent.pk)
            manifest.status = "ok"
            manifest.last_error = ""
            manifest.spec_version = report.spec_version
            manifest.host = report.host
            manifest.entry_count = report.entry_count
            manifest.type_counts = report.type_counts
            manifest.other_entries = report.other_entries[:200]
        else:
            manifest.status = "error"
            first = next((f for f in report.findings if f.severity == "error"), None)
            manifest.last_error = first.message if first else "the manifest could not be read"
        manifest.findings = [f.as_dict() for f in report.findings][:200]
        manifest.content_sha256 = hashlib.sha256(body).hexdigest()
        manifest.save()
    for agent_id, inline in to_crawl:
        if inline is None:
            enqueue_crawl(agent_id)
    # The entries' words (representative queries, tags, description) are part of what is
    # embedded for natural-language search.
    if report_agents := [str(pk) for pk in listed_ids]:
        queue.embed_after_commit(report_agents)
    return manifest, [(agent_id, inline) for agent_id, inline in to_crawl if inline is not None]

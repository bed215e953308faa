"""ARD manifests: read an origin's manifest and keep its agents in step (docs/ard.md).

Finding the manifest is cards/manifest_resolution.py's (its names are re-exported here for the
crawl). Each A2A entry becomes an agent: a ``url`` entry is crawled like any submitted card
(through the safe fetcher), a ``data`` entry is ingested from the manifest; an entry naming the
card the origin's own row was read from binds that row. An entry that disappears marks its agent
(``manifest_listed=False``) and its history says so. A manifest speaks only for agents on its
own host that no other account owns (docs/ard.md, "Which agents a manifest may speak for";
docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cards import hooks
from cards.ard import identifiers
from cards.ard.manifest import AgentEntry, ManifestReport, finding, read, url_authority
from cards.discovery import origin_of
from cards.indexing import search_text_of
from cards.manifest_resolution import Found, Resolution, resolve, was_read
from cards.models import Agent, AgentEvent, Manifest
from cards.rendering.store import agent_changed
from cards.services import enqueue_leased_crawl, submitted_url_check
from cards.url_form import normalise_fetched
from registry.errors import ProblemError
from registry.findings import Finding
from registry.http import FetchResult

log = logging.getLogger(__name__)
# The shape of an origin's row that stands for its manifest (it has no card of its own).
STAND_IN = "ard-manifest"
__all__ = ["STAND_IN", "Found", "Resolution", "ingest", "lists_origin", "resolve", "was_read"]


def _event(agent: Agent, kind: str, detail: dict[str, Any]) -> None:
    """An entry in the agent's history, shown with its current snapshot."""
    AgentEvent.objects.create(
        agent=agent, snapshot_id=agent.latest_snapshot_id, kind=kind, detail=detail
    )


def _owned_by_another(agent: Agent, owner_id: int | None) -> bool:
    return agent.submitted_by_id is not None and agent.submitted_by_id != owner_id


def _inline_of(manifest: Manifest, agent: Agent) -> bool:
    return agent.url.startswith(manifest.url + "#")


def _card_of_another(url: str, owner_id: int | None) -> bool:
    """Another account's agent has its card at ``url`` (found on its origin's well-known path,
    or where its URL redirects): the URL is that agent's, as for a submission."""
    others = Agent.objects.filter(card_url=url, submitted_by__isnull=False)
    return others.exclude(submitted_by_id=owner_id).exists() if owner_id else others.exists()


def _owner_finding(pointer: str) -> Finding:
    return finding(
        "ard.entry-owner",
        "error",
        pointer,
        "another account registered this agent: a manifest does not take over an agent "
        "it does not own; the entry is refused",
    )


def _origin_reading(origin_id: Any, url: str) -> Agent | None:
    """The origin's own row when its card was read at ``url`` (from the card paths, while the
    manifest could not be fetched or before it was published): that agent is the entry's."""
    if origin_id is None:
        return None
    rows = Agent.objects.filter(pk=origin_id, card_url=url, latest_snapshot__isnull=False)
    return rows.exclude(shape=STAND_IN).first()


def lists_origin(manifest: Manifest, origin_id: Any) -> bool:
    """Whether the origin's own row is one of the manifest's listed agents (bound by
    :func:`ingest` to the entry naming its card)."""
    rows = Agent.objects.filter(pk=origin_id, manifest=manifest, manifest_listed=True)
    return rows.exclude(shape=STAND_IN).exists()


def _entry_agent(
    manifest: Manifest,
    entry: AgentEntry,
    report: ManifestReport,
    owner_id: int | None,
    origin_id: Any = None,
) -> tuple[Agent, bool] | None:
    """The agent an entry speaks for: an existing one only when the manifest has authority
    over its card URL and the agent is not another account's (the origin's own row when its
    card was read at that URL); otherwise a new one, owned by the account that submitted the
    origin. None (and a finding) when the entry is refused."""
    pointer = f"/entries/{entry.index}"
    if entry.url is not None:
        try:
            url = submitted_url_check(urljoin(manifest.url, entry.url))
        except ProblemError as exc:
            report.findings.append(finding("ard.entry-url", "error", pointer + "/url", exc.detail))
            return None
        if not url_authority(manifest.url, url):
            report.findings.append(
                finding(
                    "ard.entry-authority",
                    "error",
                    pointer + "/url",
                    f"{url} is not on the manifest's host or one of its subdomains (same scheme "
                    "and port): a manifest speaks only for its own agents (ARD 4.5.1); the entry "
                    "is refused",
                )
            )
            return None
    else:
        url = f"{manifest.url}#{entry.identifier or f'entry-{entry.index}'}"[:2048]
    agent = Agent.objects.filter(url=url).first()
    if agent is None and entry.url is not None:
        agent = _origin_reading(origin_id, url)
    if agent is None and _card_of_another(url, owner_id):
        report.findings.append(_owner_finding(pointer))
        return None
    if agent is None:
        agent = Agent.objects.create(
            url=url,
            discover=False,
            submitted_by_id=owner_id,
            # The same moderation as a submission: a manifest is not a way around it.
            moderation=(
                Agent.Moderation.APPROVED
                if settings.REGISTRY_AUTO_APPROVE
                else Agent.Moderation.PENDING
            ),
        )
        return agent, True
    if _owned_by_another(agent, owner_id):
        report.findings.append(_owner_finding(pointer))
        return None
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


def _release(agent: Agent, manifest: Manifest) -> None:
    """An agent bound to a manifest that never had authority over its URL (bound before that
    was checked): its entry's data goes, and it is no longer the manifest's to list or delist."""
    log.warning("agent %s released from manifest %s: no authority over it", agent.pk, manifest.url)
    agent.manifest = None
    agent.manifest_listed = None
    agent.ard_entry = {}  # rendering derives tags and capabilities from the card alone again
    snapshot = agent.latest_snapshot
    agent.search_text = search_text_of(snapshot.card if snapshot is not None else None, {})
    agent.save(
        update_fields=[
            "manifest", "manifest_listed", "ard_entry", "search_text", "updated_at",
        ]
    )  # fmt: skip
    agent_changed(agent.pk)


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


def ingest(
    found: Found, *, owner_id: int | None = None, origin_id: Any = None
) -> tuple[Manifest, list[tuple[Any, FetchResult]]]:
    """Store the manifest and bring its agents in step; ``url`` entries are queued for a crawl.
    Returns the manifest and the inline cards (``data`` entries) for the caller to ingest.
    ``owner_id``: the account that submitted the origin; new agents are its, and an agent of
    another account is never bound, changed or delisted. ``origin_id``: the origin's own row,
    bound to the entry that names the card it holds (its crawl reads that card next). A manifest
    that cannot be read keeps what was stored before: its agents stay as they were."""
    now = timezone.now()
    url = normalise_fetched(found.url)[:2048]  # two spellings of one manifest are one row
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
    report = found.report or read(
        body, manifest_url=url, max_entries=settings.REGISTRY_ARD_MAX_ENTRIES
    )
    to_crawl: list[Any] = []
    listed_ids: set[Any] = set()
    with transaction.atomic():
        if report.ok:
            listed = listed_ids
            for entry in report.agents:
                placed = _entry_agent(manifest, entry, report, owner_id, origin_id)
                if placed is None:
                    continue
                agent, created = placed
                if agent.pk in listed:
                    # One card listed twice (in two spellings of its URL): one agent, once.
                    report.findings.append(
                        finding(
                            "ard.entry-repeated",
                            "warning",
                            f"/entries/{entry.index}",
                            "an earlier entry names the same card URL (perhaps spelled "
                            "another way); this entry is skipped",
                        )
                    )
                    continue
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
                elif agent.pk != origin_id and (created or agent.status == Agent.Status.PENDING):
                    to_crawl.append((agent.pk, None))
                else:
                    agent_changed(agent.pk)
            gone = Agent.objects.filter(manifest=manifest, manifest_listed=True).exclude(
                pk__in=listed
            )
            for agent in gone.select_related("latest_snapshot"):
                if not _inline_of(manifest, agent) and not url_authority(manifest.url, agent.url):
                    _release(agent, manifest)
                    continue
                if _owned_by_another(agent, owner_id):
                    continue  # not this crawl's to delist (docs/security.md)
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
            enqueue_leased_crawl(agent_id)
    # The entries' words (representative queries, tags, description) are part of what is
    # embedded for natural-language search.
    if report_agents := [str(pk) for pk in listed_ids]:
        hooks.text_changed(report_agents)  # search embeds them once this commits
    return manifest, [(agent_id, inline) for agent_id, inline in to_crawl if inline is not None]

"""Stored URLs brought to the normal form (cards/url_form.py), and the rows that then collide.

Migrations 0017 and 0020 (numeric IPv4 spellings as dotted quads, issue 44) apply it, through
:func:`migrate`; ``manage.py url_collisions`` reports it without changing anything
(run it before migrating to see what the migration will do). It works on the models it is
given, so the migration passes its historical ones.

What it does, losing nothing:

* every agent's ``url`` and ``card_url`` and every manifest's ``url`` take their normal form;
  a card inline in a manifest (``<manifest URL>#<id>``) follows its manifest's URL;
* agents whose URLs become one URL: the oldest keeps it. It is the first registration of the
  URL; every later row exists only because its URL was spelled differently, and would have been
  refused or answered with the first. The others are soft-deleted (history, snapshots and
  owner kept), their URL becomes ``<as it was>#duplicate-of-<keeper id>`` so that no submission
  reaches them, and an audit entry (action ``merge``) records what happened; they leave their
  manifest's listing. Nothing of a moderation decision is moved between rows: a merged row
  whose state differs from the keeper's in what readers see (one public, the other not; or one
  rejected or hidden) is listed for a curator to review. Carrying a rejection over
  automatically would let a rejected copy take its original down, and carrying an approval
  over would undo a rejection;
* manifests whose URLs become one: the oldest keeps it, the others' agents move to it, and the
  others are marked the same way (``#duplicate-of-<id>``, status ``error``);
* a URL with no normal form (refused today) or too long once normalised is left as it is, and
  reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from cards.rendering.store import render_stale_after_migrating
from cards.url_form import InvalidURL, normalise_url

MAX_URL = 2048
PUBLIC = ("approved", "featured")
RESTRICTED = ("hidden", "rejected")
MARK = "#duplicate-of-"  # ends the URL of a merged row


@dataclass
class _Row:
    pk: Any
    url: str
    created_at: datetime
    moderation: str = ""
    deleted: bool = False


@dataclass
class Merge:
    """``row`` (with its URL as it was) goes into ``keeper``, which holds ``url`` now."""

    row: _Row
    keeper: _Row
    url: str


@dataclass
class Plan:
    agent_urls: dict[Any, str] = field(default_factory=dict)  # pk -> its normal URL
    card_urls: dict[Any, str] = field(default_factory=dict)
    merged: list[Merge] = field(default_factory=list)
    manifest_urls: dict[Any, str] = field(default_factory=dict)
    merged_manifests: list[Merge] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # what was left as it was, and why

    @property
    def changed(self) -> bool:
        return bool(
            self.agent_urls
            or self.card_urls
            or self.merged
            or self.manifest_urls
            or self.merged_manifests
        )

    def review(self) -> list[Merge]:
        """Merges a curator should look at: the rows differed in what readers saw."""
        return [merge for merge in self.merged if _differ(merge.row, merge.keeper)]

    def lines(self) -> list[str]:
        """What was (or would be) done, one line per fact, for a person to read."""
        out = [
            f"URL normal form: {len(self.agent_urls)} agent URLs, {len(self.card_urls)} card "
            f"URLs and {len(self.manifest_urls)} manifest URLs rewritten; "
            f"{len(self.merged)} agents and {len(self.merged_manifests)} manifests merged."
        ]
        for merge in self.merged_manifests:
            out.append(
                f"manifest {merge.row.pk} ({merge.row.url}) merged into manifest "
                f"{merge.keeper.pk} ({merge.url}); its agents moved there"
            )
        for merge in self.merged:
            out.append(
                f"agent {merge.row.pk} ({merge.row.url}, {_state(merge.row)}) merged into agent "
                f"{merge.keeper.pk} ({merge.url}, {_state(merge.keeper)}): soft-deleted, its "
                "history kept"
            )
        for merge in self.review():
            out.append(
                f"review: agent {merge.row.pk} was {_state(merge.row)} and agent "
                f"{merge.keeper.pk}, which keeps the URL {merge.url}, is {_state(merge.keeper)}"
            )
        out.extend(f"left as it was: {line}" for line in self.left)
        return out


def _shown(row: _Row) -> bool:
    return row.moderation in PUBLIC and not row.deleted


def _differ(row: _Row, keeper: _Row) -> bool:
    """Readers saw the two differently, or moderation restricted one of them."""
    restricted = row.moderation in RESTRICTED or keeper.moderation in RESTRICTED
    return restricted or _shown(row) != _shown(keeper)


def _state(row: _Row) -> str:
    return f"{row.moderation}, deleted" if row.deleted else row.moderation


def _normal(url: str, what: str, left: list[str]) -> str | None:
    try:
        normal = normalise_url(url)
    except InvalidURL as exc:
        left.append(f"{what} {url}: {exc}")
        return None
    if len(normal) > MAX_URL:
        left.append(f"{what} {url}: longer than {MAX_URL} characters once normalised")
        return None
    return normal


def _groups(rows: list[_Row], key: dict[Any, str]) -> list[list[_Row]]:
    """Rows sharing a normal URL, oldest first (the first is the one that keeps it)."""
    by_url: dict[str, list[_Row]] = {}
    for row in rows:
        if row.pk in key:
            by_url.setdefault(key[row.pk], []).append(row)
    return [sorted(group, key=lambda r: (r.created_at, str(r.pk))) for group in by_url.values()]


def _plan_manifests(apps: Any, plan: Plan) -> dict[str, str]:
    """Manifests' normal URLs and merges; returns each stored URL -> the URL it ends as."""
    manifest_model = apps.get_model("cards", "Manifest")
    rows = [
        _Row(pk, url, created)
        for pk, url, created in manifest_model.objects.values_list("pk", "url", "created_at")
        if MARK not in url  # merged before: out of the way for good
    ]
    normal = {}
    for row in rows:
        found = _normal(row.url, f"manifest {row.pk}", plan.left)
        if found is not None:
            normal[row.pk] = found
    ends_as = {}
    for group in _groups(rows, normal):
        keeper, url = group[0], normal[group[0].pk]
        for row in group:
            ends_as[row.url] = url
        if keeper.url != url:
            plan.manifest_urls[keeper.pk] = url
        plan.merged_manifests.extend(Merge(row, keeper, url) for row in group[1:])
    return ends_as


def _agent_url(url: str, pk: Any, manifests: dict[str, str], left: list[str]) -> str | None:
    if "#" in url:  # a card inline in a manifest: <manifest URL>#<entry>
        base, entry = url.split("#", 1)
        normal = manifests.get(base) or _normal(base, f"agent {pk}", left)
        return None if normal is None else f"{normal}#{entry}"
    return _normal(url, f"agent {pk}", left)


def plan(apps: Any) -> Plan:
    """What bringing every stored URL to the normal form changes; nothing is written."""
    out = Plan()
    manifests = _plan_manifests(apps, out)
    agent_model = apps.get_model("cards", "Agent")
    rows: list[_Row] = []
    normal: dict[Any, str] = {}
    fields = ("pk", "url", "card_url", "created_at", "moderation", "deleted_at")
    for pk, url, card_url, created, moderation, deleted_at in (
        agent_model.objects.values_list(*fields).order_by("created_at", "pk").iterator()
    ):
        if MARK in url:
            continue  # merged before: out of the way for good
        rows.append(_Row(pk, url, created, moderation, deleted_at is not None))
        found = _agent_url(url, pk, manifests, out.left)
        if found is not None:
            normal[pk] = found
        if card_url:
            card = _normal(card_url, f"card URL of agent {pk}", out.left)
            if card is not None and card != card_url:
                out.card_urls[pk] = card
    for group in _groups(rows, normal):
        keeper, url = group[0], normal[group[0].pk]
        if keeper.url != url:
            out.agent_urls[keeper.pk] = url
        out.merged.extend(Merge(row, keeper, url) for row in group[1:])
    return out


def _marked(url: str, keeper: Any) -> str:
    """A merged row's URL: as it was, marked so that no submission or lookup reaches it."""
    mark = f"{MARK}{keeper}"
    return url[: MAX_URL - len(mark)] + mark


def apply(apps: Any, plan: Plan, *, now: datetime) -> None:
    """Write ``plan``. Merged rows are renamed first: a keeper may take the URL one of them
    holds (the unique constraints on ``url`` hold at every step)."""
    manifest_model = apps.get_model("cards", "Manifest")
    agent_model = apps.get_model("cards", "Agent")
    audit_model = apps.get_model("cards", "AuditEntry")
    for merge in plan.merged_manifests:
        manifest_model.objects.filter(pk=merge.row.pk).update(
            url=_marked(merge.row.url, merge.keeper.pk),
            status="error",
            last_error=f"the same URL as manifest {merge.keeper.pk} once normalised; merged there",
        )
        agent_model.objects.filter(manifest_id=merge.row.pk).update(
            manifest_id=merge.keeper.pk, doc_format=0
        )
    for pk, url in plan.manifest_urls.items():
        manifest_model.objects.filter(pk=pk).update(url=url)
    for merge in plan.merged:
        row = agent_model.objects.filter(pk=merge.row.pk)
        row.update(url=_marked(merge.row.url, merge.keeper.pk), next_crawl_at=None, doc_format=0)
        row.filter(deleted_at__isnull=True).update(deleted_at=now)
        # Out of its manifest's listing, so that the manifest's next crawl does not delist it.
        row.filter(manifest_listed=True).update(manifest_listed=False)
        audit_model.objects.create(
            agent_id=merge.row.pk,
            action="merge",
            reason=f"Another spelling of {merge.url}, which agent {merge.keeper.pk} holds "
            "(one normal form for every URL, migration 0017).",
            detail={"url": merge.row.url, "keeper": str(merge.keeper.pk), "normal_url": merge.url},
        )
    # One UPDATE per changed row; doc_format 0 has its documents rendered again.
    changes: dict[Any, dict[str, Any]] = {}
    for pk, url in plan.agent_urls.items():
        changes.setdefault(pk, {"doc_format": 0})["url"] = url
    for pk, url in plan.card_urls.items():
        changes.setdefault(pk, {"doc_format": 0})["card_url"] = url
    for pk, fields in changes.items():
        agent_model.objects.filter(pk=pk).update(**fields)


def migrate(apps: Any, schema_editor: Any) -> None:
    """A migration's step: every stored URL in today's normal form, collisions merged, what was
    done printed, and the changed agents' documents rendered again."""
    found = plan(apps)
    if not found.changed and not found.left:
        return
    apply(apps, found, now=timezone.now())
    print()
    for line in found.lines():
        print(f"  {line}")
    if found.changed:
        render_stale_after_migrating(apps, schema_editor)

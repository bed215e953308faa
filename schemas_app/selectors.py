"""Reads behind the schema endpoints.

"Which agents accept/produce schema X" is answered from the card index's mode rows
(``cards.models.Mode.schema``), exactly like ``GET /api/v1/agents?schema=X`` and
``input_mode=application/json;schema=X``, so the three always agree; the schema index
(:class:`SchemaUse`) adds which content each agent declares under the name.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from cards.models import Agent, Extension, Mode
from schemas_app.models import SchemaChange, SchemaDocument, SchemaUse

INPUT, OUTPUT = Mode.Direction.INPUT, Mode.Direction.OUTPUT


def agents_with_schema(
    agents: QuerySet[Agent], name: str, direction: str | None = None
) -> QuerySet[Agent]:
    """Those of ``agents`` with a mode naming the schema (in ``direction``, or either)."""
    modes = Mode.objects.filter(agent=OuterRef("pk"), schema=name)
    if direction is not None:
        modes = modes.filter(direction=direction)
    return agents.filter(Exists(modes))


def schema_names(
    agents: QuerySet[Agent], *, prefix: str = "", after: str | None = None, limit: int = 20
) -> list[str]:
    """Schema names, in order, that a mode names or a card declares (one page)."""
    from_modes = Mode.objects.filter(schema__isnull=False, agent__in=agents).exclude(schema="")
    from_cards = SchemaUse.objects.filter(role=SchemaUse.Role.DECLARED, agent__in=agents).exclude(
        name=""
    )
    if prefix:
        from_modes = from_modes.filter(schema__startswith=prefix)
        from_cards = from_cards.filter(name__startswith=prefix)
    if after is not None:
        from_modes = from_modes.filter(schema__gt=after)
        from_cards = from_cards.filter(name__gt=after)
    names: set[str] = {
        name
        for name in from_modes.order_by("schema")
        .values_list("schema", flat=True)
        .distinct()[: limit + 1]
        if name
    }
    names |= set(from_cards.order_by("name").values_list("name", flat=True).distinct()[: limit + 1])
    return sorted(names)[: limit + 1]


def schema_counts(agents: QuerySet[Agent], names: list[str]) -> dict[str, dict[str, int]]:
    """Per name: agents declaring it, accepting it (input modes), producing it, and variants."""
    counts: dict[str, dict[str, int]] = {
        n: {"declaring": 0, "accepting": 0, "producing": 0, "variants": 0} for n in names
    }
    declared = (
        SchemaUse.objects.filter(role=SchemaUse.Role.DECLARED, name__in=names, agent__in=agents)
        .values("name")
        .annotate(agents=Count("agent", distinct=True), variants=Count("sha256", distinct=True))
    )
    for row in declared:
        counts[row["name"]]["declaring"] = row["agents"]
        counts[row["name"]]["variants"] = row["variants"]
    modes = (
        Mode.objects.filter(schema__in=names, agent__in=agents)
        .values("schema")
        .annotate(
            accepting=Count("agent", filter=Q(direction=INPUT), distinct=True),
            producing=Count("agent", filter=Q(direction=OUTPUT), distinct=True),
        )
    )
    for mode_row in modes:
        counts[str(mode_row["schema"])]["accepting"] = mode_row["accepting"]
        counts[str(mode_row["schema"])]["producing"] = mode_row["producing"]
    return counts


def schema_variants(
    agents: QuerySet[Agent], name: str, *, agents_per_variant: int = 20
) -> list[dict[str, Any]]:
    """The contents declared under ``name`` (one per hash), with the agents declaring each."""
    uses = (
        SchemaUse.objects.filter(role=SchemaUse.Role.DECLARED, name=name, agent__in=agents)
        .select_related("agent")
        .only("sha256", "document_id", "agent__id", "agent__name")
        .order_by("-agent__created_at", "-agent__id")
    )
    by_hash: dict[str, dict[str, Any]] = {}
    for use in uses:
        entry = by_hash.setdefault(
            use.sha256, {"document_id": use.document_id, "agents": [], "agent_count": 0}
        )
        entry["agent_count"] += 1
        if len(entry["agents"]) < agents_per_variant:
            entry["agents"].append(use.agent)
    documents = SchemaDocument.objects.in_bulk(
        [v["document_id"] for v in by_hash.values() if v["document_id"] is not None]
    )
    variants = []
    for sha256, entry in by_hash.items():
        variants.append(
            {
                "sha256": sha256,
                "document": documents.get(entry["document_id"]),
                "agents": entry["agents"],
                "agent_count": entry["agent_count"],
            }
        )
    variants.sort(key=lambda v: (-v["agent_count"], v["sha256"]))
    return variants


def schema_changes(
    agents: QuerySet[Agent], *, name: str | None = None, agent: Agent | None = None
) -> QuerySet[SchemaChange]:
    rows = SchemaChange.objects.filter(agent__in=agents).select_related(
        "agent", "snapshot", "previous_snapshot"
    )
    if name is not None:
        rows = rows.filter(name=name)
    if agent is not None:
        rows = rows.filter(agent=agent)
    return rows.order_by("-created_at", "-id")


def schema_known(agents: QuerySet[Agent], name: str) -> bool:
    return (
        Mode.objects.filter(schema=name, agent__in=agents).exists()
        or SchemaUse.objects.filter(name=name, agent__in=agents).exists()
        or SchemaChange.objects.filter(name=name, agent__in=agents).exists()
    )


def uses_by_agent(agent_ids: list[Any], name: str) -> dict[Any, dict[str, Any]]:
    """For agents on a page: the hash each declares under ``name`` and the skills using it."""
    out: dict[Any, dict[str, Any]] = defaultdict(
        lambda: {"sha256": None, "input_skills": [], "output_skills": []}
    )
    for agent_id, sha256 in SchemaUse.objects.filter(
        agent_id__in=agent_ids, name=name, role=SchemaUse.Role.DECLARED
    ).values_list("agent_id", "sha256"):
        out[agent_id]["sha256"] = sha256
    modes = (
        Mode.objects.filter(agent_id__in=agent_ids, schema=name, skill__isnull=False)
        .order_by("skill__position")
        .values_list("agent_id", "direction", "skill__skill_id")
    )
    for agent_id, direction, skill_id in modes:
        skills = out[agent_id][f"{direction}_skills"]
        if skill_id not in skills:
            skills.append(skill_id)
    return out


def document_uses(
    agents: QuerySet[Agent], document: SchemaDocument, *, limit: int = 200
) -> list[SchemaUse]:
    return list(
        SchemaUse.objects.filter(document=document, agent__in=agents)
        .select_related("agent")
        .order_by("-agent__created_at", "agent_id", "id")[:limit]
    )


def extension_rows(agents: QuerySet[Agent], uri: str) -> QuerySet[Extension]:
    return Extension.objects.filter(uri=uri, agent__in=agents).select_related("agent")


def agent_schema_uses(agent: Agent) -> list[SchemaUse]:
    return list(SchemaUse.objects.filter(agent=agent).select_related("document").order_by("id"))


def changes_by_snapshot(snapshot_ids: list[Any]) -> dict[Any, list[dict[str, Any]]]:
    """Schema verdicts per snapshot, for an agent history page (one query)."""
    out: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        SchemaChange.objects.filter(snapshot_id__in=snapshot_ids)
        .order_by("id")
        .values(
            "snapshot_id",
            "name",
            "kind",
            "direction",
            "verdict",
            "lenient_verdict",
            "old_sha256",
            "new_sha256",
        )
    )
    for row in rows:
        entry: dict[str, Any] = dict(row)
        out[entry.pop("snapshot_id")].append(entry)
    return dict(out)

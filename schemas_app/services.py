"""Writes: indexing an agent's schemas, and recording how its named schemas changed.

:func:`index_agent_schemas` is called by card ingestion, inside its transaction, right after
``cards.indexing.index_card`` and before the agent's ``latest_snapshot`` moves to the new
snapshot. It replaces the agent's :class:`SchemaUse` rows, stores each new schema content once
(:class:`SchemaDocument`, by hash), and, when the card replaced an earlier snapshot, records a
:class:`SchemaChange` with a compatibility verdict for every named schema that changed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from cards.models import Agent, Snapshot
from schemas_app import budget
from schemas_app.analysis import SchemaAnalysis, analyse_schema
from schemas_app.compat import classify
from schemas_app.conf import limit
from schemas_app.extract import extract
from schemas_app.models import SchemaChange, SchemaDocument, SchemaUse

logger = logging.getLogger(__name__)


def _document(analysis: SchemaAnalysis) -> SchemaDocument:
    return SchemaDocument(
        sha256=analysis.sha256,
        hash_algorithm=analysis.hash_algorithm,
        content=analysis.content,
        size=analysis.size,
        dialect=analysis.dialect[:512],
        draft=analysis.draft,
        schema_uri=analysis.schema_uri,
        title=analysis.title,
        types=analysis.types,
        type_mask=analysis.type_mask,
        required=analysis.required,
        required_count=len(analysis.required),
        property_names=analysis.property_names,
        closed=analysis.closed,
        deprecated=analysis.deprecated,
        usable=analysis.usable,
        problems=analysis.problem_dicts(),
    )


def store_documents(analyses: list[SchemaAnalysis]) -> dict[str, SchemaDocument]:
    """The stored document of each storable analysis, creating the missing ones (by hash)."""
    wanted = {a.sha256: a for a in analyses if a.storable and a.sha256}
    if not wanted:
        return {}
    found = {d.sha256: d for d in SchemaDocument.objects.filter(sha256__in=list(wanted))}
    missing = [_document(a) for sha, a in wanted.items() if sha not in found]
    if missing:
        # Another ingestion may store the same content at the same moment: the unique hash
        # settles it, and the row is read back either way.
        SchemaDocument.objects.bulk_create(missing, ignore_conflicts=True)
        found.update(
            {
                d.sha256: d
                for d in SchemaDocument.objects.filter(sha256__in=[d.sha256 for d in missing])
            }
        )
    return found


@dataclass
class _NamedState:
    """A named schema of one card: its content hash and how modes use it."""

    sha256: str
    document_id: int | None
    roles: set[str] = field(default_factory=set)

    def direction(self) -> str:
        if self.roles >= {"input", "output"}:
            return "both"
        if self.roles:
            return next(iter(self.roles))
        return "unused"


def _current_state(agent: Agent) -> dict[str, _NamedState]:
    state: dict[str, _NamedState] = {}
    rows = list(
        SchemaUse.objects.filter(agent=agent)
        .exclude(source=SchemaUse.Source.FIELD)
        .values_list("name", "role", "sha256", "document_id")
    )
    for name, role, sha256, document_id in rows:
        if role == SchemaUse.Role.DECLARED:
            state.setdefault(name, _NamedState(sha256, document_id))
    for name, role, _, _ in rows:
        if role != SchemaUse.Role.DECLARED and name in state:
            state[name].roles.add(role)
    return state


def index_agent_schemas(
    *,
    agent: Agent,
    card: dict[str, Any],
    snapshot: Snapshot | None = None,
    data: Any = None,
    fresh: bool = False,
) -> list[SchemaChange]:
    """Replace the agent's schema index with what ``card`` declares; record changes.

    ``data`` (the document as served) is accepted for symmetry with the checks and unused:
    the normalised card keeps every member this looks at. ``fresh``: the agent has no card
    stored before this one, so it has no schema use to read or delete. Returns the changes
    recorded.
    """
    del data
    found = extract(card)
    cap = limit("REGISTRY_SCHEMA_MAX_PER_CARD")
    declared = {
        name: (item, analyse_schema(item.value))
        for name, item in list(found.declared.items())[:cap]
    }
    fields = [
        (ref, analyse_schema(ref.value["schema"]))
        for ref in found.fields
        if isinstance(ref.value, dict) and ref.value.get("schema") is not None
    ][:cap]
    documents = store_documents([a for _, a in declared.values()] + [a for _, a in fields])

    def doc_of(analysis: SchemaAnalysis) -> SchemaDocument | None:
        return documents.get(analysis.sha256) if analysis.storable else None

    previous = {} if fresh else _current_state(agent)
    rows: list[SchemaUse] = []
    new_state: dict[str, _NamedState] = {}
    for name, (item, analysis) in declared.items():
        document = doc_of(analysis)
        new_state[name] = _NamedState(analysis.sha256, document.pk if document else None)
        rows.append(
            SchemaUse(
                agent=agent,
                document=document,
                sha256=analysis.sha256,
                role=SchemaUse.Role.DECLARED,
                source=SchemaUse.Source.SCHEMAS,
                name=name[:512],
                pointer=item.pointer[:2048],
            )
        )
    for ref in found.modes:
        if ref.name not in declared:
            continue  # an undeclared schema: reported by the checks, nothing to link
        item, analysis = declared[ref.name]
        new_state[ref.name].roles.add(ref.direction)
        rows.append(
            SchemaUse(
                agent=agent,
                document=doc_of(analysis),
                sha256=analysis.sha256,
                role=ref.direction,
                source=SchemaUse.Source.MODE,
                name=ref.name[:512],
                skill_id=ref.skill_id[:512],
                skill_position=ref.skill_index,
                pointer=ref.pointer[:2048],
            )
        )
    for field_ref, analysis in fields:
        rows.append(
            SchemaUse(
                agent=agent,
                document=doc_of(analysis),
                sha256=analysis.sha256,
                role=field_ref.direction,
                source=SchemaUse.Source.FIELD,
                skill_id=field_ref.skill_id[:512],
                skill_position=field_ref.skill_index,
                field_name=(field_ref.name or "")[:512],
                pointer=(field_ref.pointer + "/schema")[:2048],
            )
        )
    if not fresh:
        SchemaUse.objects.filter(agent=agent).delete()
    SchemaUse.objects.bulk_create(rows)

    previous_id = agent.latest_snapshot_id
    if snapshot is None or previous_id is None or previous_id == snapshot.pk:
        return []
    return record_changes(
        agent=agent,
        snapshot=snapshot,
        previous_snapshot_id=previous_id,
        before=previous,
        after=new_state,
    )


def _contents(states: list[_NamedState]) -> dict[int, Any]:
    ids = [s.document_id for s in states if s.document_id is not None]
    return dict(SchemaDocument.objects.filter(pk__in=ids).values_list("pk", "content"))


def record_changes(
    *,
    agent: Agent,
    snapshot: Snapshot,
    previous_snapshot_id: int | None,
    before: dict[str, _NamedState],
    after: dict[str, _NamedState],
) -> list[SchemaChange]:
    with budget.scope():  # the crawl's budget: verdicts past it are "unknown" (TOO_COMPLEX)
        changes = _changes(agent, snapshot, previous_snapshot_id, before, after)
    SchemaChange.objects.bulk_create(changes)
    return changes


def _changes(
    agent: Agent,
    snapshot: Snapshot,
    previous_snapshot_id: int | None,
    before: dict[str, _NamedState],
    after: dict[str, _NamedState],
) -> list[SchemaChange]:
    contents = _contents([*before.values(), *after.values()])
    changes: list[SchemaChange] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        change = SchemaChange(
            agent=agent,
            snapshot=snapshot,
            previous_snapshot_id=previous_snapshot_id,
            name=name[:512],
            old_sha256=old.sha256 if old else "",
            new_sha256=new.sha256 if new else "",
        )
        if old is not None and new is not None:
            if old.sha256 == new.sha256:
                continue
            roles = old.roles | new.roles
            change.kind = SchemaChange.Kind.CHANGED
            change.direction = _NamedState("", None, roles).direction()
            if old.document_id in contents and new.document_id in contents:
                verdict = classify(
                    contents[old.document_id], contents[new.document_id], change.direction
                )
                change.verdict = verdict.verdict
                change.lenient_verdict = verdict.lenient_verdict
                change.semantic = verdict.semantic
                change.reasons = verdict.reasons[:200]
            else:
                change.verdict = change.lenient_verdict = SchemaChange.Verdict.UNKNOWN
                change.reasons = [
                    {
                        "type": "NOT_COMPARABLE",
                        "pointer": "/",
                        "compatible": False,
                        "direction": change.direction,
                        "message": "one version is not stored (too large or not a schema)",
                    }
                ]
        elif new is not None:
            change.kind = SchemaChange.Kind.ADDED
            change.direction = new.direction()
            change.verdict = change.lenient_verdict = SchemaChange.Verdict.COMPATIBLE
            change.reasons = [
                {"type": "SCHEMA_NAME_ADDED", "pointer": "/", "compatible": True, "direction": ""}
            ]
        else:
            assert old is not None
            change.kind = SchemaChange.Kind.REMOVED
            change.direction = old.direction()
            used = bool(old.roles)
            change.verdict = change.lenient_verdict = (
                SchemaChange.Verdict.BREAKING if used else SchemaChange.Verdict.COMPATIBLE
            )
            change.reasons = [
                {
                    "type": "SCHEMA_NAME_REMOVED",
                    "pointer": "/",
                    "compatible": not used,
                    "direction": change.direction,
                }
            ]
        changes.append(change)
    return changes

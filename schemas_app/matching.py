"""Which agents accept this payload? (``POST /api/v1/schemas/match``)

1. Prefilter in the database on the features indexed per schema content: the payload's JSON
   type against the schema's top-level type mask; for an object payload, the schema's required
   names must all be keys of the payload (``required <@ keys``) and, for a closed schema
   (``additionalProperties: false``), every key must be a declared property
   (``property_names @> keys``). Only usable schemas that some agent currently uses as input
   are considered. The prefilter is conservative: it only drops schemas that cannot accept.
2. Validate the payload against each surviving schema with its compiled validator, taken from
   the per-process cache keyed by content hash (contents are loaded only for cache misses).
3. Read the uses of the accepting schemas: agents, skills, schema names and fields.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from cards.models import Agent
from schemas_app import budget
from schemas_app.analysis import validator_for, value_bits
from schemas_app.models import SchemaDocument, SchemaUse
from schemas_app.validation import validators


@dataclass
class MatchResult:
    agents: list[dict[str, Any]] = field(default_factory=list)
    candidates: int = 0
    accepted: int = 0
    truncated: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)


def input_documents() -> QuerySet[SchemaDocument]:
    """Usable schema contents some agent currently uses as input (mode or field)."""
    inputs = SchemaUse.objects.filter(document=OuterRef("pk"), role=SchemaUse.Role.INPUT)
    return SchemaDocument.objects.filter(usable=True).filter(Exists(inputs))


def _storable(name: str) -> bool:
    if "\x00" in name:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _prefilter(payload: Any) -> list[tuple[int, str, str]]:
    """(id, sha256, draft) of the schemas the payload may satisfy."""
    bits = value_bits(payload)
    rows = input_documents().alias(type_hit=F("type_mask").bitand(bits)).filter(type_hit__gt=0)
    if not isinstance(payload, dict):
        return list(rows.values_list("pk", "sha256", "draft"))
    keys = sorted(payload)
    if connection.vendor == "postgresql":
        # A name PostgreSQL cannot store (NUL, a lone surrogate) is no schema's required or
        # declared property: it only rules out the closed schemas, and is not sent.
        storable = [key for key in keys if _storable(key)]
        if len(storable) != len(keys):
            rows = rows.filter(closed=False)
        keys = storable
        # `required ?| keys` is answered by the GIN index (migration 0002), `required_count = 0`
        # by a partial index; containment and closedness are checked on those rows only.
        rows = (
            rows.filter(Q(required_count=0) | Q(required__has_any_keys=keys))
            .filter(required__contained_by=keys)
            .filter(Q(closed=False) | Q(property_names__contains=keys))
        )
        return list(rows.values_list("pk", "sha256", "draft"))
    # SQLite (the no-configuration mode) has no JSON containment: filter the features here.
    key_set = set(keys)
    return [
        (pk, sha256, draft)
        for pk, sha256, draft, required, names, closed in rows.values_list(
            "pk", "sha256", "draft", "required", "property_names", "closed"
        )
        if set(required) <= key_set and (not closed or key_set <= set(names))
    ]


def accepting_documents(payload: Any) -> tuple[list[int], int]:
    """Ids of the input schemas that accept ``payload``, and how many were candidates.

    Runs under the schema budget of the request (:mod:`schemas_app.budget`): raises
    ``BudgetExhausted`` when the validations spend it."""
    with budget.scope():
        return _accepting(payload)


def _accepting(payload: Any) -> tuple[list[int], int]:
    candidates = _prefilter(payload)
    cached = validators.lookup(sha for _, sha, _ in candidates)
    missing = [pk for pk, sha, _ in candidates if sha not in cached]
    contents: dict[int, Any] = {}
    if missing:
        contents = dict(SchemaDocument.objects.filter(pk__in=missing).values_list("pk", "content"))
    accepted: list[int] = []
    for pk, sha, draft in candidates:
        if sha in cached:
            validator = cached[sha]
        elif pk in contents:
            validator = validator_for(sha, contents[pk], draft)
        else:
            continue  # deleted meanwhile
        if validator is not None and budget.run(validator.is_valid, payload):
            accepted.append(pk)
    return accepted, len(candidates)


def match_payload(
    payload: Any, *, limit: int, agents: QuerySet[Agent] | None = None
) -> MatchResult:
    """Those of ``agents`` (at most ``limit``) whose input schemas accept ``payload``, newest
    first."""
    started = time.perf_counter()
    result = MatchResult()
    accepted, result.candidates = accepting_documents(payload)
    result.accepted = len(accepted)
    result.timings_ms["validate"] = (time.perf_counter() - started) * 1000
    if not accepted:
        return result
    agents = agents if agents is not None else Agent.objects.all()
    agent_ids = list(
        agents.filter(
            Exists(
                SchemaUse.objects.filter(
                    agent=OuterRef("pk"), document_id__in=accepted, role=SchemaUse.Role.INPUT
                )
            )
        )
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)[: limit + 1]
    )
    result.truncated = len(agent_ids) > limit
    agent_ids = agent_ids[:limit]
    names = dict(Agent.objects.filter(pk__in=agent_ids).values_list("pk", "name"))
    uses = (
        SchemaUse.objects.filter(
            agent_id__in=agent_ids, document_id__in=accepted, role=SchemaUse.Role.INPUT
        )
        .order_by("id")
        .values_list("agent_id", "source", "name", "field_name", "skill_id", "sha256")
    )
    grouped: OrderedDict[Any, OrderedDict[tuple[str, str, str, str], list[str]]] = OrderedDict(
        (agent_id, OrderedDict()) for agent_id in agent_ids
    )
    for agent_id, source, name, field_name, skill_id, sha256 in uses:
        skills = grouped[agent_id].setdefault((source, name, field_name, sha256), [])
        if skill_id and skill_id not in skills:
            skills.append(skill_id)
    for agent_id, matches in grouped.items():
        result.agents.append(
            {
                "id": str(agent_id),
                "name": names.get(agent_id, ""),
                "matches": [
                    {
                        "source": source,
                        "schema": name or None,
                        "field": (field_name or None) if source == SchemaUse.Source.FIELD else None,
                        "sha256": sha256,
                        "skills": skills,
                    }
                    for (source, name, field_name, sha256), skills in matches.items()
                ],
            }
        )
    result.timings_ms["total"] = (time.perf_counter() - started) * 1000
    return result

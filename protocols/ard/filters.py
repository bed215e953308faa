"""ARD ``query.filter`` on the registry's agents: the core terms and the A2A ones (docs/ard.md).

Keys are term paths, values an array (a bare string is one value); OR within a key, AND across
keys (ARD 5.3.1). A key the registry does not index is a 400 naming it. Everything narrows a
queryset that came from the visibility gate; nothing here widens it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from cards.indexing import normalise_tag
from cards.models import Agent, Extension, Mode, SkillTag
from protocols.ard.errors import ArdError, invalid
from registry.errors import ProblemError
from search.filters import mode_query

A2A_TYPE = "application/a2a-agent-card+json"
# Older spellings an ARD client may use for the same artefact.
A2A_TYPES = frozenset({A2A_TYPE, "application/agent-card+json"})
SIGNATURE_STATES = ("verified", "unsigned", "invalid", "unbound-key", "key-unavailable")
MAX_VALUES = 20
MAX_VALUE_LENGTH = 1000


def _values(key: str, raw: Any) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise invalid(f"filter '{key}' has no values", field=f"query.filter.{key}")
    if len(items) > MAX_VALUES:
        raise invalid(
            f"filter '{key}' has more than {MAX_VALUES} values", field=f"query.filter.{key}"
        )
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise invalid(
                f"filter '{key}' values must be non-empty strings", field=f"query.filter.{key}"
            )
        if len(item) > MAX_VALUE_LENGTH or "\x00" in item:
            raise invalid(f"filter '{key}' has a value that is too long or has a NUL character",
                          field=f"query.filter.{key}")  # fmt: skip
        out.append(item.strip())
    return out


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _by_type(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    return rows if A2A_TYPES & {v.lower() for v in values} else rows.none()


def _by_tags(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    wanted = sorted({normalise_tag(v) for v in values})
    if _postgres():
        return rows.extra(where=["cards_agent.tags && %s::text[]"], params=[wanted])  # noqa: S610
    return rows.filter(Exists(SkillTag.objects.filter(agent=OuterRef("pk"), tag__in=wanted)))


def _by_capabilities(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    if _postgres():
        return rows.extra(  # noqa: S610 - bound parameter
            where=["cards_agent.capabilities && %s::text[]"], params=[sorted(set(values))]
        )
    match = Q()
    for value in values:  # JSON text on SQLite: look for the quoted token
        match |= Q(capabilities__contains=f'"{value}"')
    return rows.filter(match)


def _by_publisher(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    match = Q()
    for value in values:
        match |= Q(ard_identifier__startswith=f"urn:air:{value.lower()}:")
    return rows.filter(match)


def _by_version(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    return rows.filter(version__in=values)


def _modes(direction: str, key: str) -> Callable[[QuerySet[Agent], list[str]], QuerySet[Agent]]:
    def narrow(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
        match = Q()
        for value in values:
            try:
                query = mode_query(value, parameter=key)
            except ProblemError as exc:
                raise invalid(
                    f"filter '{key}': {value!r} is not a media type with at most one parameter",
                    field=f"query.filter.{key}",
                ) from exc
            match |= Q(Exists(query.rows(direction).filter(agent=OuterRef("pk"))))
        return rows.filter(match)

    return narrow


def _by_schema(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    return rows.filter(Exists(Mode.objects.filter(agent=OuterRef("pk"), schema__in=values)))


def _choices(
    key: str, column: str, allowed: tuple[str, ...]
) -> Callable[[QuerySet[Agent], list[str]], QuerySet[Agent]]:
    def narrow(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
        wrong = sorted(set(values) - set(allowed))
        if wrong:
            raise invalid(
                f"filter '{key}' takes {', '.join(allowed)}; not {', '.join(wrong)}",
                field=f"query.filter.{key}",
            )
        return rows.filter(**{f"{column}__in": values})

    return narrow


def _by_extensions(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    return rows.filter(Exists(Extension.objects.filter(agent=OuterRef("pk"), uri__in=values)))


def _by_verified_publisher(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    """``verifiedPublisher``: "true" (any verified publisher), "false" (none), or origins."""
    match = Q()
    for value in values:
        if value == "true":
            match |= ~Q(publisher_origin="")
        elif value == "false":
            match |= Q(publisher_origin="")
        else:
            match |= Q(publisher_origin=value.rstrip("/").lower())
    return rows.filter(match)


def _by_identifier(rows: QuerySet[Agent], values: list[str]) -> QuerySet[Agent]:
    return rows.filter(ard_identifier__in=values)


TERMS: dict[str, Callable[[QuerySet[Agent], list[str]], QuerySet[Agent]]] = {
    "type": _by_type,
    "identifier": _by_identifier,
    "tags": _by_tags,
    "capabilities": _by_capabilities,
    "publisher": _by_publisher,
    "version": _by_version,
    "inputModes": _modes(Mode.Direction.INPUT, "inputModes"),
    "outputModes": _modes(Mode.Direction.OUTPUT, "outputModes"),
    "schema": _by_schema,
    "signature": _choices("signature", "signature_status", SIGNATURE_STATES),
    "health": _choices("health", "health", tuple(Agent.Health.values)),
    "extensions": _by_extensions,
    "verifiedPublisher": _by_verified_publisher,
}


def check(filters: Any) -> dict[str, list[str]]:
    """The filter object, checked: known keys, string values (a scalar becomes one value)."""
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise invalid("query.filter must be an object", field="query.filter")
    unknown = sorted(set(filters) - set(TERMS))
    if unknown:
        raise ArdError(
            400,
            f"filter term not indexed by this registry: {', '.join(unknown)}. "
            f"Supported: {', '.join(TERMS)}",
            field=f"query.filter.{unknown[0]}",
        )
    return {key: _values(key, value) for key, value in filters.items()}


def apply(rows: QuerySet[Agent], filters: dict[str, list[str]]) -> QuerySet[Agent]:
    """Narrow the gate's agents; ARD only sees agents with an identifier, and agents gone for a
    week or dropped from their manifest are left out unless a ``health`` filter asks for them."""
    rows = rows.filter(ard_identifier__isnull=False)
    if "health" not in filters:
        rows = rows.exclude(health=Agent.Health.GONE).exclude(manifest_listed=False)
    for key, values in filters.items():
        rows = TERMS[key](rows, values)
    return rows

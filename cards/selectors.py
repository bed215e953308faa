"""Reads: search over agents and skills, and facet counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Upper

from cards.indexing import normalise_tag
from cards.mediatypes import MediaTypeError, parse_media_type
from cards.models import Agent, Extension, Mode, Skill, SkillTag
from registry.errors import ProblemError


@dataclass(frozen=True)
class ModeQuery:
    """A media type as a search term.

    With parameters it matches that exact mode (parameters normalised); without, any mode of
    that type/subtype; ``type/*`` any subtype of the type; ``*/*`` anything.
    """

    canonical: str | None = None
    essence: str | None = None
    type_prefix: str | None = None

    def rows(self, direction: str) -> QuerySet[Mode]:
        rows = Mode.objects.filter(direction=direction)
        if self.canonical is not None:
            return rows.filter(media_type=self.canonical)
        if self.essence is not None:
            return rows.filter(essence=self.essence)
        if self.type_prefix is not None:
            return rows.filter(essence__startswith=self.type_prefix)
        return rows


def mode_query(text: str, *, parameter: str) -> ModeQuery:
    try:
        media = parse_media_type(text)
    except MediaTypeError as exc:
        detail = f"{parameter} is not a media type: {exc}"
        raise ProblemError(
            status=400,
            slug="invalid-parameter",
            title="Invalid query parameter",
            detail=detail,
            errors=[{"pointer": f"#/{parameter}", "message": detail}],
        ) from None
    if media.params:
        return ModeQuery(canonical=media.canonical)
    if media.type == "*":
        return ModeQuery()
    if media.subtype == "*":
        return ModeQuery(type_prefix=media.type + "/")
    return ModeQuery(essence=media.essence)


def _uses_postgres() -> bool:
    return connection.vendor == "postgresql"


def text_filter(queryset: QuerySet[Agent], text: str) -> QuerySet[Agent]:
    """Full-text search on PostgreSQL (GIN index on the same expression); words on SQLite."""
    text = text.strip()
    if not text:
        return queryset
    if _uses_postgres():
        return queryset.extra(  # noqa: S610 - parameters are bound, the expression matches the index
            where=[
                "to_tsvector('english'::regconfig, cards_agent.search_text)"
                " @@ websearch_to_tsquery('english'::regconfig, %s)"
            ],
            params=[text],
        )
    for word in text.split()[:10]:
        queryset = queryset.filter(search_text__icontains=word)
    return queryset


def with_tag(queryset: QuerySet[Agent], tag: str) -> QuerySet[Agent]:
    return queryset.filter(
        Exists(SkillTag.objects.filter(agent=OuterRef("pk"), tag=normalise_tag(tag)))
    )


def with_mode(queryset: QuerySet[Agent], query: ModeQuery, direction: str) -> QuerySet[Agent]:
    return queryset.filter(Exists(query.rows(direction).filter(agent=OuterRef("pk"))))


def with_skill(queryset: QuerySet[Agent], skill: str) -> QuerySet[Agent]:
    matches = Skill.objects.filter(agent=OuterRef("pk")).filter(
        Q(skill_id=skill) | Q(name__iexact=skill)
    )
    return queryset.filter(Exists(matches))


def with_schema(queryset: QuerySet[Agent], name: str) -> QuerySet[Agent]:
    return queryset.filter(Exists(Mode.objects.filter(agent=OuterRef("pk"), schema=name)))


def with_extension(queryset: QuerySet[Agent], uri: str) -> QuerySet[Agent]:
    return queryset.filter(Exists(Extension.objects.filter(agent=OuterRef("pk"), uri=uri)))


def with_provider(queryset: QuerySet[Agent], organization: str) -> QuerySet[Agent]:
    # Compared upper-cased to use the functional index agent_provider_upper_idx.
    return queryset.alias(provider_upper=Upper("provider_organization")).filter(
        provider_upper=organization.upper()
    )


def visible_agents(user: Any = None) -> QuerySet[Agent]:
    """Agents a reader may see: staff see everything not deleted; everyone else sees approved and
    featured agents, plus (for a signed-in owner) their own agents in any state."""
    agents = Agent.objects.filter(deleted_at__isnull=True)
    if user is not None and getattr(user, "is_staff", False):
        return agents
    public = Q(moderation__in=Agent.PUBLIC_STATES)
    if user is not None and getattr(user, "is_authenticated", False):
        public |= Q(submitted_by=user)
    return agents.filter(public)


# --- facets ----------------------------------------------------------------------------------


def tag_counts(*, prefix: str = "", limit: int = 50) -> list[dict[str, object]]:
    rows = SkillTag.objects.all()
    if prefix:
        rows = rows.filter(tag__startswith=normalise_tag(prefix))
    return list(
        rows.values("tag")
        .annotate(agents=Count("agent", distinct=True), skills=Count("skill", distinct=True))
        .order_by("-agents", "tag")[:limit]
    )


def mode_counts(
    *, direction: str | None = None, prefix: str = "", limit: int = 50
) -> list[dict[str, object]]:
    rows = Mode.objects.all()
    if direction:
        rows = rows.filter(direction=direction)
    if prefix:
        rows = rows.filter(media_type__startswith=prefix.lower())
    return list(
        rows.values("media_type", "essence", "schema", "direction")
        .annotate(agents=Count("agent", distinct=True))
        .order_by("-agents", "media_type", "direction")[:limit]
    )


def extension_counts(*, prefix: str = "", limit: int = 50) -> list[dict[str, object]]:
    rows = Extension.objects.all()
    if prefix:
        rows = rows.filter(uri__startswith=prefix)
    return list(
        rows.values("uri")
        .annotate(
            agents=Count("agent", distinct=True),
            required_by=Count("agent", filter=Q(required=True), distinct=True),
        )
        .order_by("-agents", "uri")[:limit]
    )

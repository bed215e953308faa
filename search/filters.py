"""Choosing agents: the search filters, by SQL on indexed columns (the lexical search).

Every function narrows a queryset that came from :func:`cards.reads.gate.agents`; nothing here
decides visibility. ``AgentSearch`` is the parsed form of the v1 search parameters, shared by
the REST list, the catalogue and the protocol endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Upper

from cards.indexing import normalise_tag
from cards.models import Agent, Extension, Mode, Skill, SkillTag
from cards.reads.compiled import Sentinels
from cards.reads.params import Query, invalid
from registry.mediatypes import MediaTypeError, parse_media_type
from registry.openapi import MAX_TAGS


@dataclass(frozen=True)
class ModeQuery:
    """A media type as a search term.

    With parameters it matches that exact mode (parameters normalised); without, any mode of
    that type/subtype; ``type/*`` any subtype of the type; ``*/*`` anything.
    """

    canonical: str | None = None
    essence: str | None = None
    type_prefix: str | None = None

    def key(self, direction: str) -> str | None:
        """The mode key this query looks for (cards.rendering.store.mode_keys), if any."""
        way = "i" if direction == Mode.Direction.INPUT else "o"
        if self.canonical is not None:
            return f"{way}:{self.canonical}"
        if self.essence is not None:
            return f"{way}~{self.essence}"
        if self.type_prefix is not None:
            return f"{way}*{self.type_prefix}"
        return None

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
        raise invalid(parameter, f"is not a media type: {exc}") from None
    if len(media.params) > 1:
        raise invalid(parameter, "takes at most one media type parameter (such as schema=X)")
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
    """Full-text search on PostgreSQL; every word as a substring on SQLite."""
    text = text.strip()
    if not text:
        return queryset
    if _uses_postgres():
        # search_vector is a stored generated column with a GIN index (migration 0006).
        return queryset.extra(  # noqa: S610 - the parameter is bound
            where=["cards_agent.search_vector @@ websearch_to_tsquery('english'::regconfig, %s)"],
            params=[text],
        )
    for word in text.split()[:10]:
        queryset = queryset.filter(search_text__icontains=word)
    return queryset


def with_tags(queryset: QuerySet[Agent], tags: list[str]) -> QuerySet[Agent]:
    """Agents with every one of ``tags`` (on PostgreSQL, one GIN lookup on the tag array)."""
    wanted = sorted({normalise_tag(tag) for tag in tags if tag.strip()})
    if not wanted:
        return queryset
    if _uses_postgres():
        return queryset.extra(  # noqa: S610 - bound parameter, matches the GIN index agent_tags_gin
            where=["cards_agent.tags @> %s::text[]"], params=[wanted]
        )
    for tag in wanted:
        queryset = queryset.filter(Exists(SkillTag.objects.filter(agent=OuterRef("pk"), tag=tag)))
    return queryset


def with_tag(queryset: QuerySet[Agent], tag: str) -> QuerySet[Agent]:
    return with_tags(queryset, [tag])


def with_mode(queryset: QuerySet[Agent], query: ModeQuery, direction: str) -> QuerySet[Agent]:
    key = query.key(direction)
    if key is None:  # */*: any mode in that direction
        return queryset.filter(Exists(query.rows(direction).filter(agent=OuterRef("pk"))))
    return with_keys(
        queryset,
        [key],
        lambda qs: qs.filter(Exists(query.rows(direction).filter(agent=OuterRef("pk")))),
    )


def with_keys(queryset: QuerySet[Agent], keys: list[str], fallback: Any) -> QuerySet[Agent]:
    """On PostgreSQL, one GIN lookup on the agent's mode keys (agent_mode_keys_gin); the
    planner picks it for rare keys and walks the date index for common ones. Elsewhere the
    ``fallback`` (an EXISTS over the mode rows)."""
    if _uses_postgres():
        return queryset.extra(  # noqa: S610 - bound parameter
            where=["cards_agent.mode_keys @> %s::text[]"], params=[keys]
        )
    return fallback(queryset)


def with_skill(queryset: QuerySet[Agent], skill: str) -> QuerySet[Agent]:
    matches = Skill.objects.filter(agent=OuterRef("pk")).filter(
        Q(skill_id=skill) | Q(name__iexact=skill)
    )
    return queryset.filter(Exists(matches))


def with_schema(queryset: QuerySet[Agent], name: str) -> QuerySet[Agent]:
    return with_keys(
        queryset,
        [f"s:{name}"],
        lambda qs: qs.filter(Exists(Mode.objects.filter(agent=OuterRef("pk"), schema=name))),
    )


def with_extension(queryset: QuerySet[Agent], uri: str) -> QuerySet[Agent]:
    return queryset.filter(Exists(Extension.objects.filter(agent=OuterRef("pk"), uri=uri)))


def with_provider(queryset: QuerySet[Agent], organization: str) -> QuerySet[Agent]:
    # Compared upper-cased to use the functional index agent_provider_upper_idx.
    return queryset.alias(provider_upper=Upper("provider_organization")).filter(
        provider_upper=organization.upper()
    )


def _mode_kind(query: ModeQuery | None) -> str:
    if query is None:
        return ""
    if query.canonical is not None:
        return "canonical"
    if query.essence is not None:
        return "essence"
    return "prefix" if query.type_prefix is not None else "any"


# ?live=: the live checks' outcome (docs/live-checks.md); repeatable, any matches.
LIVE_OUTCOMES = ("pass", "fail", "not-checked")


@dataclass
class AgentSearch:
    """The v1 search parameters, parsed and checked (docs/api.md, "Search")."""

    q: str = ""
    tags: list[str] = field(default_factory=list)
    skill: str = ""
    input_mode: ModeQuery | None = None
    output_mode: ModeQuery | None = None
    schema: str = ""
    extension: str = ""
    provider: str = ""
    streaming: bool | None = None
    valid: bool | None = None
    verified: bool | None = None  # a verified publisher (issue 44)
    signed: bool | None = None  # signed by a key bound to the card's origin
    health: list[str] = field(default_factory=list)
    status: str = ""
    live: list[str] = field(default_factory=list)

    PARAMETERS = (
        "q",
        "tag",
        "skill",
        "input_mode",
        "output_mode",
        "schema",
        "extension",
        "provider",
        "streaming",
        "valid",
        "verified",
        "signed",
        "health",
        "status",
        "live",
    )
    MAX_TAGS = MAX_TAGS

    @classmethod
    def parse(cls, query: Query) -> AgentSearch:
        search = cls(
            q=" ".join(query.one("q").split()),
            tags=query.all("tag"),
            skill=query.one("skill"),
            schema=query.one("schema"),
            extension=query.one("extension"),
            provider=query.one("provider"),
            streaming=query.boolean("streaming"),
            valid=query.boolean("valid"),
            verified=query.boolean("verified"),
            signed=query.boolean("signed"),
            health=query.choices("health", Agent.Health.values),
            status=query.choice("status", Agent.Status.values),
            live=query.choices("live", LIVE_OUTCOMES, blank=False),
        )
        if len(query.data.getlist("tag")) > cls.MAX_TAGS:  # blank ones count: it is the limit
            raise invalid("tag", f"is given too often: at most {cls.MAX_TAGS} tags can be combined")
        for name in ("input_mode", "output_mode"):
            text = query.one(name)
            if text:
                setattr(search, name, mode_query(text, parameter=name))
        return search

    def shape(self) -> tuple[Any, ...]:
        """What decides the SQL of this search, apart from the values (cards.reads.compiled)."""
        return (
            bool(self.q),
            bool(self.tags),
            bool(self.skill),
            _mode_kind(self.input_mode),
            _mode_kind(self.output_mode),
            bool(self.schema),
            bool(self.extension),
            bool(self.provider),
            self.streaming,
            self.valid,
            self.verified,
            self.signed,
            tuple(sorted(self.health)),
            self.status,
            tuple(sorted(set(self.live))),
        )

    def with_sentinels(self, sentinels: Sentinels) -> AgentSearch:
        """A copy whose values are sentinels standing for this search's values (PostgreSQL)."""
        copy = replace(self)
        if self.q:
            copy.q = sentinels.text(self.q)
        if any(tag.strip() for tag in self.tags):
            fresh = sentinels.fresh()
            copy.tags = [fresh]
            wanted = sorted({normalise_tag(tag) for tag in self.tags if tag.strip()})
            sentinels.derived([fresh], wanted)
        if self.skill:
            copy.skill = sentinels.text(self.skill)
        for name, direction in (("input_mode", "input"), ("output_mode", "output")):
            query: ModeQuery | None = getattr(self, name)
            if query is not None and query.key(direction) is not None:
                fresh = sentinels.fresh()
                stand_in = ModeQuery(
                    canonical=fresh if query.canonical is not None else None,
                    essence=fresh if query.essence is not None else None,
                    type_prefix=fresh if query.type_prefix is not None else None,
                )
                sentinels.derived([stand_in.key(direction)], [query.key(direction)])
                setattr(copy, name, stand_in)
        if self.schema:
            fresh = sentinels.fresh()
            copy.schema = fresh
            sentinels.derived([f"s:{fresh}"], [f"s:{self.schema}"])
        if self.extension:
            copy.extension = sentinels.text(self.extension)
        if self.provider:
            fresh = sentinels.fresh()
            copy.provider = fresh
            sentinels.derived(fresh, self.provider.upper())
        return copy

    def apply(self, agents: QuerySet[Agent]) -> QuerySet[Agent]:
        """Narrow the gate's agents by every filter given."""
        if not self.health:
            # Agents whose card has answered 404/410 for a week are left out unless asked for.
            agents = agents.exclude(health=Agent.Health.GONE)
        else:
            agents = agents.filter(health__in=self.health)
        if self.q:
            agents = text_filter(agents, self.q)
        agents = with_tags(agents, self.tags)
        if self.skill:
            agents = with_skill(agents, self.skill)
        if self.input_mode is not None:
            agents = with_mode(agents, self.input_mode, Mode.Direction.INPUT)
        if self.output_mode is not None:
            agents = with_mode(agents, self.output_mode, Mode.Direction.OUTPUT)
        if self.schema:
            agents = with_schema(agents, self.schema)
        if self.extension:
            agents = with_extension(agents, self.extension)
        if self.provider:
            agents = with_provider(agents, self.provider)
        for name in ("streaming", "valid"):
            value = getattr(self, name)
            if value is not None:
                agents = agents.filter(**{name: value})
        if self.verified is True:
            agents = agents.exclude(publisher_origin="")
        elif self.verified is False:
            agents = agents.filter(publisher_origin="")
        if self.signed is True:
            agents = agents.filter(signature_status="verified")
        elif self.signed is False:
            agents = agents.exclude(signature_status="verified")
        if self.status:
            agents = agents.filter(status=self.status)
        if self.live:
            # An agent never checked has no outcome yet: it reads as not-checked.
            wanted = set(self.live) | ({""} if "not-checked" in self.live else set())
            agents = agents.filter(live_outcome__in=sorted(wanted))
        return agents

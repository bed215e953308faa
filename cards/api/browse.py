"""Browsing the index: skill-level search and the facet counts (tags, modes, extensions)."""

from __future__ import annotations

from django.db.models import Q
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from cards.api.common import CURSOR, LIMIT, page_of, page_response, viewer_of
from cards.indexing import normalise_tag
from cards.models import FacetCount, Mode, Skill
from cards.reads import documents, facets, gate, paging
from cards.reads.params import Query, invalid
from registry.openapi import MAX_TAGS
from search.filters import mode_query

SKILLS = paging.Keyset(scope="skills", order=("-id",))

SKILL_ITEM = inline_serializer(
    "SkillWithAgent",
    {
        "id": serializers.CharField(),
        "name": serializers.CharField(),
        "description": serializers.CharField(),
        "tags": serializers.ListField(child=serializers.CharField()),
        "examples": serializers.ListField(child=serializers.CharField()),
        "input_modes": serializers.ListField(child=serializers.CharField()),
        "output_modes": serializers.ListField(child=serializers.CharField()),
        "agent": inline_serializer(
            "SkillAgent",
            {
                "id": serializers.UUIDField(),
                "name": serializers.CharField(),
                "link": serializers.URLField(),
            },
        ),
    },
)


class SkillListView(APIView):
    """Skill-level search over visible agents."""

    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="Text in the skill name or description."),
            OpenApiParameter("tag", str, many=True, description="Tag; repeat it: all must match."),
            OpenApiParameter("input_mode", str),
            OpenApiParameter("output_mode", str),
            OpenApiParameter("agent", OpenApiTypes.UUID),
            CURSOR,
            LIMIT,
        ],
        responses={200: page_of("SkillPage", SKILL_ITEM)},
    )
    def get(self, request: Request) -> HttpResponse:
        query = Query(
            request.query_params,
            ["q", "tag", "input_mode", "output_mode", "agent", "cursor", "limit"],
        )
        limit = query.limit()
        skills = Skill.objects.filter(agent__in=gate.agents(viewer_of(request), include_gone=False))
        agent = query.uuid("agent")
        if agent is not None:
            skills = skills.filter(agent_id=agent)
        for word in query.one("q").split()[:10]:
            skills = skills.filter(Q(name__icontains=word) | Q(description__icontains=word))
        tags = query.all("tag")
        if len(request.query_params.getlist("tag")) > MAX_TAGS:  # blank ones count too
            raise invalid("tag", f"is given too often: at most {MAX_TAGS} tags can be combined")
        for tag in tags:
            skills = skills.filter(tag_rows__tag=normalise_tag(tag))
        for name, direction in (
            ("input_mode", Mode.Direction.INPUT),
            ("output_mode", Mode.Direction.OUTPUT),
        ):
            text = query.one(name)
            if text:
                modes = mode_query(text, parameter=name).rows(direction).filter(skill__isnull=False)
                skills = skills.filter(pk__in=modes.values("skill_id"))
        rows = list(
            SKILLS.apply(skills, query.one("cursor")).values(
                "pk",
                "skill_id",
                "name",
                "description",
                "tags",
                "examples",
                "input_modes",
                "output_modes",
                "agent_id",
                "agent__name",
            )[: limit + 1]
        )
        more = len(rows) > limit
        rows = rows[:limit]
        base = documents.base_of(request)
        results = [
            {
                "id": row["skill_id"],
                "name": row["name"],
                "description": row["description"],
                "tags": row["tags"],
                "examples": row["examples"],
                "input_modes": row["input_modes"],
                "output_modes": row["output_modes"],
                "agent": {
                    "id": str(row["agent_id"]),
                    "name": row["agent__name"],
                    "link": f"{base}/api/v1/agents/{row['agent_id']}",
                },
            }
            for row in rows
        ]
        cursor = SKILLS.next_cursor([rows[-1]["pk"]]) if more and rows else None
        return page_response({"results": results, "next": paging.next_link(request, cursor)})


# --- facets -----------------------------------------------------------------------------------

TAG_FACET = inline_serializer(
    "TagFacet",
    {
        "tag": serializers.CharField(),
        "agents": serializers.IntegerField(),
        "skills": serializers.IntegerField(),
    },
)
MODE_FACET = inline_serializer(
    "ModeFacet",
    {
        "media_type": serializers.CharField(),
        "essence": serializers.CharField(),
        "schema": serializers.CharField(allow_null=True),
        "direction": serializers.ChoiceField(choices=["input", "output"]),
        "agents": serializers.IntegerField(),
    },
)
EXTENSION_FACET = inline_serializer(
    "ExtensionFacet",
    {
        "uri": serializers.CharField(),
        "agents": serializers.IntegerField(),
        "required_by": serializers.IntegerField(),
    },
)
PREFIX = OpenApiParameter("prefix", str, description="Only values starting with this.")


def _facet(request: Request, kind: str, *, directions: bool = False) -> HttpResponse:
    known = ["prefix", "cursor", "limit"] + (["direction"] if directions else [])
    query = Query(request.query_params, known)
    limit = query.limit()
    direction = query.choice("direction", ["input", "output"], blank=False) if directions else ""
    rows, last = facets.facet_page(
        kind,
        prefix=query.one("prefix"),
        direction=direction,
        cursor=query.one("cursor"),
        limit=limit,
    )
    cursor = facets.KEYSET[FacetCount.Kind(kind)].next_cursor(last) if last is not None else None
    return page_response({"results": rows, "next": paging.next_link(request, cursor)})


class TagFacetView(APIView):
    """Tags of public agents, most common first (maintained counts)."""

    @extend_schema(
        parameters=[PREFIX, CURSOR, LIMIT], responses={200: page_of("TagFacetPage", TAG_FACET)}
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.TAG)


class ModeFacetView(APIView):
    """Input and output media types of public agents, most common first."""

    @extend_schema(
        parameters=[
            PREFIX,
            OpenApiParameter("direction", str, enum=["input", "output"]),
            CURSOR,
            LIMIT,
        ],
        responses={200: page_of("ModeFacetPage", MODE_FACET)},
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.MODE, directions=True)


class ExtensionFacetView(APIView):
    """Extensions declared by public agents, most common first."""

    @extend_schema(
        parameters=[PREFIX, CURSOR, LIMIT],
        responses={200: page_of("ExtensionFacetPage", EXTENSION_FACET)},
    )
    def get(self, request: Request) -> HttpResponse:
        return _facet(request, FacetCount.Kind.EXTENSION)

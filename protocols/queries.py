"""The reads behind the MCP tools and the A2A endpoint: plain functions over the visibility gate.

Both protocol interfaces call these, so a tool call and ``message/send`` answer exactly what the
REST API answers, with the same filters and the same error messages (``ProblemError.detail``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db.models import Count, Q
from django.http import HttpRequest, QueryDict

from cards.api.reads import AGENTS
from cards.models import Agent
from cards.reads import documents, gate
from cards.reads.gate import Viewer
from cards.reads.params import Query
from registry.errors import ProblemError
from schemas_app.matching import match_payload
from schemas_app.models import SchemaUse
from schemas_app.payloads import DeclaredSchemas, check_message
from search import semantic
from search.filters import AgentSearch

MAX_LIMIT = 100
FILTERS = tuple(name for name in AgentSearch.PARAMETERS if name not in ("q", "valid", "status"))


def base_request(base_url: str) -> HttpRequest:
    """A request object for building absolute links (``base_url`` like ``http://host:port``)."""
    scheme, _, host = base_url.partition("://")
    request = HttpRequest()
    request.META["HTTP_HOST"] = host.rstrip("/") or "localhost"
    request.META["wsgi.url_scheme"] = scheme or "http"
    request.META["SERVER_PORT"] = "443" if scheme == "https" else "80"
    return request


def _invalid(detail: str, errors: list[dict[str, str]]) -> ProblemError:
    return ProblemError(
        status=400,
        slug="invalid-parameter",
        title="Invalid query parameter",
        detail=detail,
        errors=errors,
    )


def _limit(limit: Any) -> int:
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)  # an integral number (JSON Schema's integer; a2a-sdk sends 5 as 5.0)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise _invalid(
            "limit must be an integer from 1 to 100",
            [{"pointer": "#/limit", "message": "must be an integer from 1 to 100"}],
        )
    return limit


def _as_query(text: str, filters: dict[str, Any]) -> QueryDict:
    query = QueryDict(mutable=True)
    if text:
        query["q"] = text
    for name in FILTERS:
        value = filters.get(name)
        if value is None or value == "" or value == []:
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            query.appendlist(name, str(item).lower() if isinstance(item, bool) else str(item))
    return query


def search_agents(
    *, text: str = "", filters: dict[str, Any], limit: int, viewer: Viewer, request: HttpRequest
) -> dict[str, Any]:
    """Agents for a need said in ``text`` (natural-language ranking, each with its ``score``)
    and the v1 filters; without text, in the API's list order. The same parsing, gate, SQL and
    stored summaries as ``GET /api/v1/agents`` (``mode=semantic`` when there is text)."""
    limit = _limit(limit)
    search = AgentSearch.parse(Query(_as_query("", filters), AgentSearch.PARAMETERS))
    agents = search.apply(gate.agents(viewer))
    base = documents.base_of(request)
    text = " ".join(text.split())
    if text:
        found = semantic.rank(text, agents, limit=limit + 1)
        results = []
        for summary, match in documents.ranked_documents(found[:limit]):
            row = json.loads(documents.with_base(summary, base))
            row.update(match.why())  # score, confident, matched_skill
            results.append(row)
        return {"results": results, "truncated": len(found) > limit}
    ordered = AGENTS.ordered(agents, None)
    texts, last = documents.page_of_summaries(ordered, keys=AGENTS.fields, limit=limit)
    results = [json.loads(documents.with_base(text, base)) for text in texts]
    return {"results": results, "truncated": last is not None}


# Schema names a get_agent answer lists (``schemas_total`` counts them all).
MAX_SCHEMAS = 100


def agent_row(viewer: Viewer, ident: str, *, snapshot: bool = True) -> Agent:
    """One visible agent by id (UUID) or ARD identifier (``urn:air:...``), or the API's 404;
    with its latest snapshot loaded unless ``snapshot`` is False (a card may be 1 MiB)."""
    rows = Agent.objects.select_related("latest_snapshot") if snapshot else Agent.objects.only("id")
    if str(ident).startswith("urn:air:"):
        found = (rows & gate.agents(viewer)).filter(ard_identifier=str(ident)).first()
        if found is None:
            raise gate.not_found()
        return found
    try:
        pk = uuid.UUID(str(ident))
    except ValueError:
        raise gate.not_found() from None
    return gate.agent(viewer, pk, queryset=rows)


def get_agent(*, ident: str, viewer: Viewer, request: HttpRequest) -> dict[str, Any]:
    """The API's agent detail (summary, skills, modes, schemas, signature, health)."""
    agent = agent_row(viewer, ident, snapshot=False)
    data: dict[str, Any] = json.loads(
        documents.detail(viewer, agent.pk, base=documents.base_of(request))
    )
    names = (
        SchemaUse.objects.filter(agent=agent)
        .exclude(name="")
        .values_list("name", flat=True)
        .distinct()
        .order_by("name")
    )
    first = list(names[: MAX_SCHEMAS + 1])
    data["schemas"] = first[:MAX_SCHEMAS]
    data["schemas_total"] = len(first) if len(first) <= MAX_SCHEMAS else names.count()
    return data


def card(*, ident: str, viewer: Viewer) -> dict[str, Any]:
    """The latest card of one visible agent, as fetched."""
    snapshot = agent_row(viewer, ident).latest_snapshot
    if snapshot is None or not isinstance(snapshot.data, dict):
        raise ProblemError(
            status=409,
            slug="no-card",
            title="No card yet",
            detail="This agent has not been fetched successfully yet.",
        )
    return snapshot.data


def find_accepting(*, payload: Any, limit: int, viewer: Viewer) -> dict[str, Any]:
    """Agents and skills whose declared input schemas accept ``payload``."""
    result = match_payload(payload, limit=_limit(limit), agents=gate.agents(viewer))
    return {
        "agents": result.agents,
        "candidates": result.candidates,
        "accepted": result.accepted,
        "truncated": result.truncated,
    }


def check_agent_message(*, ident: str, message: Any, viewer: Viewer) -> dict[str, Any]:
    """Seed 000 section 3 applied to ``message`` for one agent (what the agent must answer)."""
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        raise _invalid(
            "An A2A Message needs a parts array.",
            [{"pointer": "/message/parts", "message": "An A2A Message needs a parts array."}],
        )
    agent = agent_row(viewer, ident)
    data = check_message(message, DeclaredSchemas.of(agent)).as_dict()
    data["agent"] = {"id": str(agent.pk), "name": agent.name}
    return data


def list_schemas(*, prefix: str, limit: int, viewer: Viewer) -> dict[str, Any]:
    """Named schemas with how many visible agents declare, accept and produce each."""
    rows = (
        SchemaUse.objects.filter(agent__in=gate.agents(viewer))
        .exclude(name="")
        .filter(name__startswith=prefix)
        .values("name")
        .annotate(
            declaring=Count("agent", filter=Q(role=SchemaUse.Role.DECLARED), distinct=True),
            accepting=Count("agent", filter=Q(role=SchemaUse.Role.INPUT), distinct=True),
            producing=Count("agent", filter=Q(role=SchemaUse.Role.OUTPUT), distinct=True),
        )
        .order_by("name")[: _limit(limit)]
    )
    return {"results": list(rows)}

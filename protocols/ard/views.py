"""The ARD Registry API under ``/ard/`` (docs/ard.md). Every read starts at the visibility
gate (cards.reads.gate); errors use ARD's envelope, never a stack trace."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from cards.ard import identifiers
from cards.models import Agent
from cards.reads import gate, paging, params
from cards.reads.documents import base_of
from protocols.ard import entries, facets, federation, filters, listing, requests
from protocols.ard.errors import ArdError, invalid
from registry.compiled import Rows, UUIDArray, among
from registry.errors import ProblemError, path_problem
from registry.undecodable import query_fault
from search import door_metrics, semantic

log = logging.getLogger(__name__)
View = Callable[..., HttpResponse]


def ard_view(*methods: str) -> Callable[[View], View]:
    """Allowed methods, the ARD envelope for every error, no 500 with a trace."""

    def wrap(view: View) -> View:
        @csrf_exempt
        @functools.wraps(view)
        def handle(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                fault = query_fault(request.META.get("QUERY_STRING", ""))
                if fault is not None:
                    raise invalid(fault.sentence(), field=fault.name)
                reason = path_problem(request.path_info)
                if reason is not None:
                    raise invalid(reason.rstrip("."))
                if request.method not in methods:
                    raise ArdError(405, f"{request.method} is not allowed here; use {methods[0]}")
                return view(request, *args, **kwargs)
            except ArdError as err:
                response = err.response()
            except ProblemError as err:
                response = ArdError(err.status, str(err.detail or err.title)).response()
            except Exception:
                log.exception("ARD request failed")
                response = ArdError(500, "internal error; the failure was logged").response()
            if response.status_code == 405:
                response["Allow"] = ", ".join(methods)
            return response

        return handle

    return wrap


def _base(request: HttpRequest) -> str:
    return base_of(request).rstrip("/")


def source_of(request: HttpRequest) -> str:
    """What results say they came from: this registry's ARD base URL."""
    return _base(request) + "/ard/"


def _fingerprint(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _token(scope: str, raw: Any, read: Callable[[str, str], Any] = paging.decode) -> Any:
    """The page token read by ``read`` (a keyset or an offset); None when absent."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise invalid("pageToken must be a string", field="pageToken")
    try:
        return read(scope, raw)
    except ProblemError:
        raise invalid(
            "pageToken is not a token this registry issued for this request; "
            "start again without it",
            field="pageToken",
        ) from None


def _matched(viewer: gate.Viewer, terms: dict[str, list[str]]) -> QuerySet[Agent]:
    return filters.apply(gate.agents(viewer), terms)


# A page's rows by their ids, compiled once per thread (registry/compiled.py), PostgreSQL.
_PAGE = Rows(
    lambda ids: among(Agent.objects.only(*entries.COLUMNS), ids).order_by(), ids=UUIDArray()
)


def _projections(request: HttpRequest, ids: list[Any]) -> dict[Any, dict[str, Any]]:
    if connection.vendor == "postgresql":
        rows = _PAGE.all(ids=ids) if ids else []
    else:
        rows = list(Agent.objects.filter(pk__in=ids).only(*entries.COLUMNS))
    base, source = _base(request), source_of(request)
    return {row.pk: entries.projection(row, base=base, source=source) for row in rows}


@ard_view("POST")
def search(request: HttpRequest) -> HttpResponse:
    data = requests.body(request)
    requests.only(data, {"query", "federation", "pageSize", "pageToken"}, "")
    query = requests.query_object(data, required=True)
    text = requests.text(query, required=True)
    terms = filters.check(query.get("filter"))
    size = requests.integer(data, "pageSize", default=10, low=1, high=100)
    mode = data.get("federation", "auto")
    if mode not in federation.MODES:
        raise invalid("federation must be auto, referrals or none", field="federation")
    scope = "ard-search:" + _fingerprint(text, terms)
    offset = _token(scope, data.get("pageToken"), paging.cursor_offset) or 0
    viewer = gate.Viewer.of(request.user)
    with door_metrics.searched("ard", text):
        if text:
            ranked = semantic.rank(text, _matched(viewer, terms), limit=size + 1, offset=offset)
        else:
            ranked = _everything(_matched(viewer, terms), limit=size + 1, offset=offset)
        page = ranked[:size]
        found = _projections(request, [pk for pk, _ in page])
    results = []
    for match in page:
        if match.id in found:
            item = found[match.id]
            item.update(match.why())  # score, confident, matched_skill
            results.append(item)
    body: dict[str, Any] = {"results": results}
    if mode == "auto" and offset == 0 and text and federation.peers():
        asked = {"query": {"text": text, "filter": terms} if terms else {"text": text}}
        body["results"] = federation.merge(
            results, federation.ask_peers({**asked, "pageSize": size})
        )
    if mode == "referrals":
        body["referrals"] = federation.referrals()
    if len(ranked) > size:
        body["pageToken"] = paging.offset_cursor(scope, offset + size)
    return JsonResponse(body)


def _everything(agents: QuerySet[Agent], *, limit: int, offset: int) -> list[semantic.Match]:
    """An empty text narrows nothing: every matching entry, in the list's order (identifier),
    each a full match (score 100), as a filter-only agentQuery answers (protocols/agent_query)."""
    ids = listing.ordered(agents, "ard_identifier", False).values_list("pk", flat=True)
    return [semantic.Match(pk, 100) for pk in ids[offset : offset + limit]]


@ard_view("POST")
def explore(request: HttpRequest) -> HttpResponse:
    data = requests.body(request)
    requests.only(data, {"query", "resultType"}, "")
    query = requests.query_object(data, required=False)
    text = requests.text(query, required=False) if "text" in query else ""
    terms = filters.check(query.get("filter"))
    wanted = facets.requested(data.get("resultType"))
    viewer = gate.Viewer.of(request.user)
    agents = _matched(viewer, terms)
    if text:
        # The same relevance cutoff as search: the matched set is what search would return.
        agents = agents.filter(pk__in=semantic.matched_ids(text, agents))
    out = {name: facets.buckets(agents, name, limit, low) for name, limit, low in wanted}
    return JsonResponse({"resultType": "facets", "facets": out})


LIST_PARAMETERS = {"filter", "orderBy", "pageSize", "pageToken", "updatedSince"}


@ard_view("GET")
def agents(request: HttpRequest) -> HttpResponse:
    params = request.GET
    unknown = sorted(set(params) - LIST_PARAMETERS)
    if unknown:
        raise invalid(
            f"unknown parameter {unknown[0]!r}; known: {', '.join(sorted(LIST_PARAMETERS))}",
            field=unknown[0],
        )
    size = requests.integer(dict(params.items()), "pageSize", default=20, low=1, high=100)
    expression = params.get("filter", "")
    if len(expression) > 2000:
        raise invalid("filter is longer than 2000 characters", field="filter")
    terms, extra = listing.parse_filter(expression)
    viewer = gate.Viewer.of(request.user)
    since_text = params.get("updatedSince")
    if since_text is not None:
        return _changes(request, viewer, since_text, terms, extra, size)
    column, desc = listing.order(params.get("orderBy", ""))
    scope = "ard-list:" + _fingerprint(expression, column, desc)
    last = _token(scope, params.get("pageToken"))
    rows = listing.ordered(_matched(viewer, terms).filter(extra), column, desc)
    if last is not None:
        rows = listing.after(rows, column, desc, last)
    page = list(rows.only(*entries.COLUMNS)[: size + 1])
    base, source = _base(request), source_of(request)
    items = [entries.projection(row, base=base, source=source) for row in page[:size]]
    body: dict[str, Any] = {"items": items}
    if len(page) > size:
        tail = page[size - 1]
        value = getattr(tail, column)
        body["pageToken"] = paging.encode(
            scope, [value.isoformat() if hasattr(value, "isoformat") else value, str(tail.pk)]
        )
    return _cached(request, JsonResponse(body), viewer)


def _changes(
    request: HttpRequest,
    viewer: gate.Viewer,
    since_text: str,
    terms: dict[str, list[str]],
    extra: Any,
    size: int,
) -> HttpResponse:
    """Everything changed at or after ``updatedSince``, oldest first: ``items`` the reader may
    see and that match, ``removed`` the identifiers that no longer do (deleted, hidden, gone,
    dropped from a manifest or no longer matching)."""
    since = params.moment(since_text)
    if since is None:
        raise invalid("updatedSince must be an ISO 8601 time with a zone", field="updatedSince")
    scope = "ard-changes:" + _fingerprint(since_text, terms, str(extra))
    last = _token(scope, request.GET.get("pageToken"))
    rows = gate.changes(viewer, since).filter(ard_identifier__isnull=False)
    rows = listing.ordered(rows, "updated_at", False)
    if last is not None:
        rows = listing.after(rows, "updated_at", False, last)
    page = list(rows.only(*entries.COLUMNS)[: size + 1])
    shown = page[:size]
    matching = set(
        _matched(viewer, terms).filter(extra).filter(pk__in=[row.pk for row in shown])
        .values_list("pk", flat=True)
    )  # fmt: skip
    base, source = _base(request), source_of(request)
    items, removed = [], []
    for row in shown:
        if row.pk in matching:
            items.append(entries.projection(row, base=base, source=source))
        else:
            removed.append(
                {"identifier": row.ard_identifier, "updatedAt": row.updated_at.isoformat()}
            )
    body: dict[str, Any] = {"items": items, "removed": removed}
    if len(page) > size:
        tail = shown[-1]
        body["pageToken"] = paging.encode(scope, [tail.updated_at.isoformat(), str(tail.pk)])
    elif shown:
        body["nextUpdatedSince"] = shown[-1].updated_at.isoformat()
    else:
        body["nextUpdatedSince"] = since.isoformat()
    return JsonResponse(body)


def _cached(request: HttpRequest, response: HttpResponse, viewer: gate.Viewer) -> HttpResponse:
    """Strong ETag over the body, 304 on a match; public caching for anonymous readers only."""
    etag = '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
    response["ETag"] = etag
    response["Cache-Control"] = "public, max-age=60" if viewer.anonymous else "private, no-cache"
    wanted = request.headers.get("If-None-Match", "")
    if etag in [tag.strip() for tag in wanted.split(",")] or wanted.strip() == "*":
        not_modified = HttpResponse(status=304)
        not_modified["ETag"] = etag
        not_modified["Cache-Control"] = response["Cache-Control"]
        return not_modified
    return response


@ard_view("GET")
def agent(request: HttpRequest, identifier: str) -> HttpResponse:
    """One entry by identifier: the path is decoded once (by the server), then matched exactly."""
    try:
        identifiers.parse(identifier)
    except identifiers.InvalidIdentifier as exc:
        raise invalid(str(exc), field="identifier") from None
    viewer = gate.Viewer.of(request.user)
    row = gate.agents(viewer).filter(ard_identifier=identifier).only(*entries.COLUMNS).first()
    if row is None:
        raise ArdError(404, f"no agent with identifier {identifier}")
    entry = entries.full(row, base=_base(request), source=source_of(request))
    return _cached(request, JsonResponse(entry), viewer)


@ard_view("GET", "POST")
def unknown(request: HttpRequest, rest: str = "") -> HttpResponse:
    raise ArdError(
        404, f"no ARD operation at /ard/{rest}; see /ard/search, /ard/explore, /ard/agents"
    )

"""The probe: hostile input and other accounts' agents sent to every door of a live registry.

The real ASGI app (registry.asgi under uvicorn, in a thread, as tests/protocols/conftest.py
starts it) serves one set of agents for the whole module: alice's public agent and her pending,
hidden, rejected and deleted canaries (tests/test_visibility.py's canary cards). Cases are
generated at collection:

* every route of the URLconf (enumerated, so a new route is probed without anyone adding it),
  with NUL, lone surrogates and invalid UTF-8 in path segments and in each query parameter the
  OpenAPI document lists for it (a generic set for routes it does not describe), impossible
  dates and offsets in date parameters, floats, huge, zero and negative numbers in integer ones;
* every JSON body (v1 POSTs, /ard/search, /ard/explore, every /mcp tool through tools/call,
  /a2a SendMessage and message/send with text, data and agentQuery parts) with NUL and lone
  surrogates in each string and as keys, 1 MB strings, 5,000 levels of nesting, 100,000 ``[``,
  empty bodies, wrong content types, arrays for objects, unknown members and, where an integer
  is expected, 5.0 (accepted), 2.5, 10**30, 0 and -1 (refused);
* every door that evaluates JSON Schemas, anonymously, with a backtracking schema over 4,000
  strings (issue 17) and one look-ahead match over a 60,000-character value or member name
  (issue 35), each under a bound on this process's CPU;
* alice, bob and anonymous against each other on every door (ownership and visibility),
  and with other spellings of alice's URLs on the write doors (``/./``, ``//``, ``%63``, a
  trailing slash, the host's trailing dot: issue 35).

Each answer must be below 500, in the door's own error shape (problem+json under /api/v1/, the
ARD envelope under /ard/, a JSON-RPC error or an MCP tool error on /a2a and /mcp) and carry no
exception text. And one answer per door (issue 39 item 7): an empty query lists every agent,
paged, at every door; a query that is not UTF-8 is the client's error at every door, naming the
parameter or the place in the body, never with Python's codec text or U+FFFD. docs/security.md
("The probe") says how to run it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from django.urls import get_resolver

from tests.support import running_server, serving_asgi
from tests.test_visibility import PARAM, SKIPPED_PREFIXES, _walk, canary_card, secrets

# The database is committed once by the module's fixture; each test only reads it over HTTP.
# A cache key made from what a client sent (a NUL, 1 MB) warns: here it fails the request.
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("error::django.core.cache.backends.base.CacheKeyWarning"),
]

STATES = ("pending", "hidden", "rejected", "deleted")
EXTENSION = "https://doors.example/ext"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
QUERY_MODE = "application/json;schema=agentQuery"
SCHEMAS_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)
# Issue 17 item 1: a pattern that backtracks, over every item of a long array of strings.
BOMB = {"type": "array", "items": {"anyOf": [{"pattern": "^(a|aa)+(?=c)$"}, {"type": "string"}]}}
HOSTILE_STRINGS = ["a" * 28 + str(i) for i in range(4000)]
ADMIN_PASSWORD = "a-long-door-warden-passphrase-7"
MCP_HEADERS = {"accept": "application/json, text/event-stream"}

# Exception text that must never reach a client.
LEAK = re.compile(
    r"Traceback|File \"/|psycopg|django\.db|\b(?:Type|Value|Key|Attribute|Index|Recursion|Unicode"
    r"(?:Encode|Decode)?|Data|Integrity|Operational|Programming|Overflow)Error\b|"
    r"object has no attribute|slice indices|NoneType|codec can't"
)


# --------------------------------------------------------------------------------------------
# The live registry and its agents, once for the module.


@dataclass
class World:
    base: str
    public: dict[str, str]  # pk, identifier, url of alice's public agent
    canaries: dict[str, dict[str, str]]  # state -> pk, identifier, url
    tokens: dict[str, str]  # alice, bob, staff
    openapi: dict[str, Any] = field(default_factory=dict)
    bomb: dict[str, str] = field(default_factory=dict)  # bob's agent with a backtracking schema
    target: dict[str, str] = field(default_factory=dict)  # an agent the admin probe moderates


def _populate() -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from cards import moderation
    from cards.models import Agent
    from cards.rendering.store import agent_changed
    from tests.factories import agent_from_card, minimal_card

    users = get_user_model().objects
    alice = users.create_user(username="alice")
    bob = users.create_user(username="bob")
    staff = users.create_user(username="doorkeeper", is_staff=True)
    users.create_superuser(username="warden", password=ADMIN_PASSWORD, email="w@doors.example")
    tokens = {u.username: Token.objects.create(user=u).key for u in (alice, bob, staff)}
    tokens["staff"] = tokens.pop("doorkeeper")

    def row(agent: Any) -> dict[str, str]:
        return {"pk": str(agent.pk), "identifier": agent.ard_identifier or "", "url": agent.url}

    public = agent_from_card(
        minimal_card(
            name="Doorway public agent",
            defaultInputModes=["text/plain", "application/json;schema=Door"],
            capabilities={"streaming": False, "extensions": [{"uri": EXTENSION}]},
            schemas={"Door": SCHEMA},
        ),
        url="https://public.doors.example/card",
    )
    Agent.objects.filter(pk=public.pk).update(submitted_by=alice)
    public.refresh_from_db()
    agent_changed(public.pk)
    bomb = agent_from_card(
        minimal_card(
            name="Bomb strings",
            capabilities={"streaming": False, "extensions": [{"uri": SCHEMAS_URI}]},
            schemas={"bomb": BOMB},
            skills=[{"id": "strings", "name": "Strings", "description": "Takes strings.",
                     "tags": ["strings"], "inputModes": ["application/json;schema=bomb"],
                     "outputModes": ["text/plain"]}],
        ),
        url="https://bomb.doors.example/card",
    )  # fmt: skip
    Agent.objects.filter(pk=bomb.pk).update(submitted_by=bob)
    agent_changed(bomb.pk)
    target = agent_from_card(
        minimal_card(name="Admin target"), url="https://target.doors.example/c"
    )
    canaries = {"bomb": row(bomb), "target": row(target)}
    for state in STATES:
        agent = agent_from_card(canary_card(state), url=f"https://{state}.doors.example/card")
        Agent.objects.filter(pk=agent.pk).update(submitted_by=alice)
        agent.refresh_from_db()
        if state == "deleted":
            moderation.agent_delete(agent=agent, actor=alice)
        else:
            moderation.agent_moderate(agent=agent, state=state, actor=staff, reason="canary")
        agent_changed(agent.pk)
        # As a submission that was never approved: no reader but alice ever saw it, so no change
        # feed may tell anyone else of it (docs/api.md, "Incremental sync").
        Agent.objects.filter(pk=agent.pk).update(ever_public=False)
        canaries[state] = row(Agent.objects.get(pk=agent.pk))
    # Alice's claim of her agent's origin (issue 44): the origin doors' path parameter.
    from publishers.models import Origin

    claim = Origin.objects.create(account=alice, origin="https://public.doors.example")
    return {**row(public), "origin_id": str(claim.pk)}, canaries, tokens


@pytest.fixture(scope="module")
def world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    from django.core.cache import cache
    from django.core.management import call_command

    with django_db_blocker.unblock():
        cache.clear()
        public, canaries, tokens = _populate()
        try:
            with serving_asgi(log_level="critical") as base:
                world = World(base=base, public=public, canaries=canaries, tokens=tokens)
                world.bomb = canaries.pop("bomb")
                world.target = canaries.pop("target")
                world.openapi = httpx.get(base + "/api/schema?format=json", timeout=30).json()
                yield world
        finally:
            call_command("flush", interactive=False, verbosity=0)
            cache.clear()


@pytest.fixture(scope="module")
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.base, timeout=30) as client:
        yield client


# --------------------------------------------------------------------------------------------
# Checking an answer.


def door_of(path: str) -> str:
    if path.startswith("/api/v1/"):
        return "v1"
    if path.startswith("/ard/") or path == "/ard":
        return "ard"
    if path.startswith("/a2a"):
        return "a2a"
    if path.startswith("/mcp"):
        return "mcp"
    return "site"


def check(response: httpx.Response, path: str) -> Any:
    """The answer is below 500, in the door's error shape, with no exception text; its JSON."""
    text = response.text
    where = f"{response.request.method} {path[:200]} -> {response.status_code}: {text[:300]!r}"
    assert response.status_code < 500, where
    # The monitoring's exposition (loopback may read it) names exception types in its counters
    # by design (django-prometheus's `type` labels): counts for operators, not a client's error.
    if response.status_code != 200 or path.split("?")[0] != "/metrics":
        assert not LEAK.search(text), where
    door = door_of(path)
    if door == "site" or response.status_code in (301, 302, 304):
        return None
    if door in ("v1", "ard") and response.status_code < 400:
        return response.json() if "json" in response.headers.get("content-type", "") else None
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"not JSON: {where}") from None
    if door == "v1":
        assert response.headers["content-type"].startswith("application/problem+json"), where
        assert {"type", "title", "status", "detail"} <= set(body), where
        assert body["status"] == response.status_code, where
    elif door == "ard":
        assert isinstance(body, dict) and {"errorCode", "message"} <= set(body), where
    else:
        assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", where
        if response.status_code >= 400 or "error" in body:
            error = body.get("error")
            assert isinstance(error, dict), where
            assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        else:
            assert "result" in body, where
    return body


def is_error(response: httpx.Response, body: Any) -> bool:
    """Whether a checked answer refuses the request (4xx, JSON-RPC error or MCP tool error)."""
    if response.status_code >= 400:
        return True
    if isinstance(body, dict) and "error" in body and "jsonrpc" in body:
        return True
    result = body.get("result") if isinstance(body, dict) else None
    if isinstance(result, dict) and result.get("isError"):
        return True
    if isinstance(result, dict):  # an A2A task that failed on its input
        task = result.get("task") or result
        state = (task.get("status") or {}).get("state", "") if isinstance(task, dict) else ""
        return "FAILED" in str(state).upper() or "REJECTED" in str(state).upper()
    return False


# --------------------------------------------------------------------------------------------
# Routes and their parameters.


def routes() -> list[str]:
    found = []
    for route, _entry in _walk(get_resolver().url_patterns):
        if route.startswith(SKIPPED_PREFIXES) or route.startswith("^"):
            continue
        found.append(route)
    # /mcp is mounted by the ASGI dispatcher outside the URLconf.
    return sorted(set(found)) + ["mcp"]


# Parameters of routes the OpenAPI document does not describe (docs/badges-and-attestations.md,
# docs/catalogue.md).
EXTRA_PARAMS = {
    "badges/<str:ident>.svg": ("label",),
    "": ("q", "tag", "input_mode", "output_mode", "schema", "cursor", "extension", "health"),
}
GENERIC_PARAMS = ("q", "limit", "cursor", "format", "filter", "pageSize", "updatedSince")
DATE_PARAMS = {"updated_since", "updatedSince", "since"}
INT_PARAMS = {"limit", "pageSize", "offset", "version", "page_size"}


def fill(route: str, world: World, override: str | None = None) -> str:
    values = {
        "pk": world.public["pk"],
        "ident": world.public["pk"],
        "identifier": world.public["identifier"],
        "uri": quote(EXTENSION, safe=""),
        "name": "Door",
        "hex": "0" * 64,
        "rest": "nowhere",
        "origin_id": world.public.get("origin_id", "1"),
    }

    def value(match: re.Match[str]) -> str:
        return override if override is not None else values.get(match.group(2), "x")

    return "/" + PARAM.sub(value, route)


def query_params(route: str, world: World) -> list[tuple[str, str]]:
    """(name, type) of the query parameters the OpenAPI document lists for a route."""
    path = "/" + PARAM.sub(lambda m: "{" + m.group(2) + "}", route)
    item = world.openapi.get("paths", {}).get(path)
    if item is None:
        if route == "ard/agents":  # documented in docs/ard.md
            names = ("filter", "orderBy", "pageSize", "pageToken", "updatedSince")
            return [(n, "documented") for n in names]
        if route in EXTRA_PARAMS:
            return [(n, "generic") for n in (*GENERIC_PARAMS, *EXTRA_PARAMS[route])]
        return [(n, "generic") for n in GENERIC_PARAMS]  # nothing says what they mean here
    out = {}
    for operation in item.values():
        if not isinstance(operation, dict):
            continue
        for parameter in operation.get("parameters", []):
            if parameter.get("in") == "query":
                out[parameter["name"]] = (parameter.get("schema") or {}).get("type", "documented")
    return sorted(out.items()) or [(n, "generic") for n in GENERIC_PARAMS[:3]]


ALL_ROUTES = routes()
PATH_HOSTILE = {
    "nul": "a%00b",
    "surrogate": "a%ED%A0%80b",
    "bad-utf8": "a%FF%FEb",
    "dot-dot": "..%2F..%2F..%2Fetc%2Fpasswd",
    "slash": "a%2Fb/c",
    "newline": "a%0D%0AX-Injected:%201",
    "rtl-override": "%E2%80%AEgpj.exe",
    "long": "a" * 8000,
    "percent": "%25%",
}
QUERY_HOSTILE = {
    "nul": "a%00b",
    "surrogate": "%ED%A0%80",
    "bad-utf8": "%C3%28%FF",
    "long": "a" * 20_000,
}
DATES = {
    "feb-30": "2026-02-30T00:00:00Z",
    "offset-99": "2026-01-01T00:00:00%2B99:00",
    "year-7240": "7240-02-16T19:56:21%2B19:10",
    "garbage": "yesterday",
}
INTEGERS = {"float-5": "5.0", "frac": "2.5", "huge": str(10**30), "zero": "0", "negative": "-1"}


def _method(route: str) -> str:
    return "POST" if route in POST_ROUTES or route == "mcp" else "GET"


POST_ROUTES = {
    "a2a",
    "ard/search",
    "ard/explore",
    "api/v1/imports",
    "api/v1/validate",
    "api/v1/schemas/match",
    "api/v1/agents/<uuid:pk>/check-message",
    "api/v1/agents/<uuid:pk>/validate-payload",
    "api/v1/agents/<uuid:pk>/recrawl",
    "api/v1/agents/<uuid:pk>/probe",
    "api/v1/agents/<uuid:pk>/try",
}


@pytest.mark.parametrize("kind", sorted(PATH_HOSTILE))
@pytest.mark.parametrize("route", [r for r in ALL_ROUTES if PARAM.search(r)])
def test_hostile_path_segments(world: World, http: httpx.Client, route: str, kind: str) -> None:
    path = fill(route, world, PATH_HOSTILE[kind])
    for method in {"GET", _method(route)}:
        response = http.request(method, path, content=b"{}" if method == "POST" else None,
                                headers={"Content-Type": "application/json"})  # fmt: skip
        check(response, path)


# Findings of this probe in code other helpers were still editing, left for the lead:
# (route, integer parameter) -> why 2.5, 10**30 or -1 is not refused there. A case listed here
# that passes fails the test (strict), so a fix is noticed and the entry removed.
KNOWN_QUERY: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_hostile_query_strings(world: World, http: httpx.Client, route: str) -> None:
    base = fill(route, world)
    method = "GET" if route != "mcp" else "POST"
    params = query_params(route, world)
    known: dict[str, bool] = {}  # reason -> whether the known defect showed
    for name, kind in params:
        values = dict(QUERY_HOSTILE)
        if name in DATE_PARAMS or "since" in name.lower():
            values.update(DATES)
        integer = kind == "integer" or (route == "ard/agents" and name == "pageSize")
        if integer or name in INT_PARAMS:
            values.update(INTEGERS)
        for label, value in values.items():
            path = f"{base}?{name}={value}"
            response = http.request(method, path)
            body = check(response, path)
            if label == "bad-utf8" and door_of(base) in ("v1", "ard") and method == "GET":
                assert response.status_code == 400, f"{path}: {response.status_code}"
            if label in ("feb-30", "offset-99", "garbage") and kind != "generic":
                assert is_error(response, body), f"{path} accepted"
            if integer and label in ("frac", "huge", "negative"):
                reason = KNOWN_QUERY.get((route, name))
                if reason is not None:
                    known[reason] = known.get(reason, False) or not is_error(response, body)
                    continue
                assert is_error(response, body), f"{path} accepted"
            # A query string spells an integer in digits: "5.0" may be refused there (a JSON
            # body's 5.0 is the integer 5: test_hostile_json_bodies).
    # Each parameter twice (a list where one value is expected), an unknown one, every hostile
    # value in a parameter's name, and bytes that are not a query at all.
    repeated = "&".join(f"{name}=1&{name}=2" for name, _kind in params)
    raws = [repeated, "zzUnknown=1", "%00=%00", "%ED%A0%80=1", "&&&==&", "a=%", "%FF", ";;;"]
    for raw in raws:
        path = f"{base}?{raw}"
        check(http.request(method, path), path)
    fixed = [reason for reason, showed in known.items() if not showed]
    assert not fixed, f"fixed: remove from KNOWN_QUERY: {fixed}"
    if known:
        pytest.xfail("; ".join(known))


@pytest.mark.parametrize("route", ALL_ROUTES)
def test_every_method_on_every_route(world: World, http: httpx.Client, route: str) -> None:
    """Methods a route does not take are refused in its door's shape (a 405 problem under
    /api/v1/, a JSON-RPC error on /a2a and /mcp), never a 500."""
    path = fill(route, world)
    for method in ("GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"):
        response = http.request(method, path, headers={"Content-Type": "application/json"})
        if method == "HEAD":
            assert response.status_code < 500, (method, path)
            continue
        check(response, path)


# Requests to a few doors of each kind, with hostile headers.
HEADER_DOORS = [
    ("GET", "/api/v1/agents", None),
    ("GET", "/ard/agents", None),
    ("POST", "/ard/search", {"query": {"text": "door"}}),
    ("POST", "/mcp", _MCP_PING := {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    ("POST", "/a2a", {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}),
    ("GET", "/", None),
    ("GET", "/healthz", None),
]
HOSTILE_HEADERS: dict[str, list[tuple[bytes, bytes]]] = {
    "unknown-token": [(b"authorization", b"Token 0123456789abcdef")],
    "long-token": [(b"authorization", b"Token " + b"a" * 8000)],
    "latin1-token": [(b"authorization", b"Token \xff\xfe\xfd")],
    "empty-token": [(b"authorization", b"Token")],
    "two-word-token": [(b"authorization", b"Token a b")],
    "basic": [(b"authorization", b"Basic !!!notbase64")],
    "bearer": [(b"authorization", b"Bearer x.y.z")],
    "host": [(b"host", b"evil.example")],
    "host-latin1": [(b"host", b"\xff.example")],
    "forwarded-for": [(b"x-forwarded-for", b"\xff, ::::, 999.999.1.1, , garbage")],
    "forwarded-host": [(b"x-forwarded-host", b"evil.example")],
    "accept": [(b"accept", b"\xff/\xfe")],
    "accept-language": [(b"accept-language", b"\xff;q=zz, " + b"x" * 4000)],
    "cookie": [(b"cookie", b"sessionid=\xff; csrftoken=" + b"a" * 4000)],
    "content-type": [(b"content-type", b"application/json; charset=\xff")],
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_HEADERS))
@pytest.mark.parametrize(("method", "path", "body"), HEADER_DOORS)
def test_hostile_headers(
    world: World, http: httpx.Client, method: str, path: str, body: Any, kind: str
) -> None:
    headers = httpx.Headers([(b"content-type", b"application/json"), *HOSTILE_HEADERS[kind]])
    if path == "/mcp":
        headers["accept"] = MCP_HEADERS["accept"]
    content = json.dumps(body).encode() if body is not None else None
    response = http.request(method, path, content=content, headers=headers)
    check(response, path)
    if kind.endswith("token") or kind in ("basic", "bearer"):
        # A credential that names no account is never taken for one: refused or anonymous.
        assert response.status_code in (200, 401, 403), (kind, path, response.text[:300])


def test_the_admin_answers_anonymous_hostile_requests(http: httpx.Client) -> None:
    """The admin is staff-only: anonymous requests, even hostile ones, go to its login page."""
    paths = ["/admin/", "/admin/cards/agent/?q=%00", "/admin/cards/agent/?q=%ED%A0%80",
             "/admin/cards/agent/%00/change/", "/admin/cards/agent/?o=%00&p=-1&all=",
             "/admin/auth/user/1/password/", "/admin/login/?next=%FF"]  # fmt: skip
    for path in paths:
        response = http.get(path)
        check(response, path)
        login_page = path.startswith("/admin/login/") and response.status_code == 200
        assert login_page or response.status_code in (302, 400, 404), (path, response.status_code)
        assert "CanaryHiddenZq" not in response.text
    login = http.post("/admin/login/", data={"username": "alice\x00", "password": "x" * 5000})
    check(login, "/admin/login/")


def _admin_routes() -> list[str]:
    from django.contrib import admin

    found = []
    for route, _entry in _walk(admin.site.get_urls()):
        route = route.lstrip("^").replace("\\Z", "").replace("$", "")
        found.append(route)
    return sorted(set(found))


ADMIN_QUERIES = [
    "q=a%00b", "q=%ED%A0%80", "q=%FF", "o=zz.-9", "p=-1", "p=99999", "all=&e=1",
    "moderation__exact=%00", "created_at__gte=2026-02-30", "agent__id__exact=not-a-uuid",
    "id__in=1,2,%00", "_changelist_filters=%00",
]  # fmt: skip
ADMIN_IDS = ("a%00b", "%ED%A0%80", "1" * 40)
ADMIN_PARAM = re.compile(r"\(\?P<\w+>[^)]*\)|<[^>]+>")


@pytest.fixture(scope="module")
def staff_http(world: World) -> Iterator[httpx.Client]:
    """A superuser's admin session, logged in through the login form (CSRF and all)."""
    with httpx.Client(base_url=world.base, timeout=30, follow_redirects=False) as client:
        page = client.get("/admin/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None, page.text[:300]
        form = {"username": "warden", "password": ADMIN_PASSWORD,
                "csrfmiddlewaretoken": token.group(1), "next": "/admin/"}  # fmt: skip
        login = client.post("/admin/login/", data=form, headers={"Referer": world.base})
        assert login.status_code == 302, login.text[:300]
        yield client


@pytest.mark.parametrize("route", _admin_routes())
def test_the_admin_answers_staff_hostile_requests(
    world: World, staff_http: httpx.Client, route: str
) -> None:
    """Staff's admin pages, with hostile query strings and object ids, never a 500."""
    if ADMIN_PARAM.search(route):  # an object's page: hostile ids
        urls = [f"/admin/{ADMIN_PARAM.sub(value, route)}" for value in ADMIN_IDS]
    else:  # a list or a form: hostile filters, orderings, pages and searches
        urls = [f"/admin/{route}"] + [f"/admin/{route}?{query}" for query in ADMIN_QUERIES]
    failures = []
    for url in urls:
        response = staff_http.get(url)
        try:
            check(response, url)
        except AssertionError as failure:
            failures.append(str(failure)[:200])
    assert failures == []


@pytest.mark.parametrize("action", ["hide", "reject", "approve", "recrawl"])
@pytest.mark.parametrize("reason", ["a\x00b", "\udfff", "x" * 5000, "<script>alert(1)</script>"])
def test_admin_actions_with_hostile_reasons(
    world: World, staff_http: httpx.Client, action: str, reason: str
) -> None:
    """The curator's bulk actions with any reason, never a 500; a reason the form refuses (a NUL,
    5,000 characters) is named as the problem (Django's admin said "No action selected.")."""
    page = staff_http.get("/admin/cards/agent/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    raw = {"action": action, "_selected_action": world.target["pk"], "index": "0",
           "csrfmiddlewaretoken": token.group(1)}  # fmt: skip
    body = "&".join(f"{k}={quote(v)}" for k, v in raw.items())
    body += "&reason=" + quote(reason.encode("utf-8", "surrogatepass"))
    response = staff_http.post(
        "/admin/cards/agent/", content=body.encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Referer": world.base},
    )  # fmt: skip
    check(response, "/admin/cards/agent/")
    assert response.status_code in (200, 302, 400), response.status_code
    said = staff_http.get("/admin/cards/agent/").text
    if "\x00" in reason or len(reason) > 2000:
        assert "The reason was not taken" in said and "No action selected" not in said


# --------------------------------------------------------------------------------------------
# JSON bodies.


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: str
    body: Any  # a function of the world's ids, or a document
    token: str = ""  # whose token: "", "alice", "bob"
    integer: tuple[str | int, ...] = ()  # the path (through the body) of an integer member, if any
    ok: bool = True  # whether the unchanged body is answered (not refused)
    # Whether a body that is not the expected JSON object is refused; /validate reports such a
    # body as a card's findings (a 200) and recrawl reads no body at all.
    strict: bool = True


def _mcp(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip


def _a2a(parts: list[dict[str, Any]], method: str = "SendMessage") -> dict[str, Any]:
    role = "ROLE_USER" if method == "SendMessage" else "user"
    return {"jsonrpc": "2.0", "id": 9, "method": method,
            "params": {"message": {"messageId": "m-1", "role": role, "parts": parts}}}  # fmt: skip


MESSAGE = {"parts": [{"kind": "data", "data": {"n": 1}, "mediaType": "application/json"}]}
ENDPOINTS = [
    Endpoint(
        "v1-submit", "/api/v1/agents", {"url": "https://submit.doors.example/card"}, "bob", ok=False
    ),  # the URL cannot be fetched: a 422 that names the failure  # fmt: skip
    Endpoint("v1-recrawl", "/api/v1/agents/{pk}/recrawl", {}, "alice", strict=False),
    # An account's own tokens and origins (issue 44). A verification fetches the challenge (no
    # such host here) and is rate-limited per account: its answer may be either.
    Endpoint("v1-tokens", "/api/v1/tokens", {"name": "door", "scope": "read"}, "alice"),
    Endpoint("v1-origins", "/api/v1/origins", {"origin": "https://door.doors.example"}, "bob"),
    Endpoint(
        "v1-origin-verify",
        "/api/v1/origins/{origin_id}/verify",
        {"method": "dns"},
        "alice",
        ok=False,
    ),  # fmt: skip
    # Trusted publishing (issue 45): Alice's origin is not verified (a 403 problem), and a
    # token that is no ID token is a 401 problem.
    Endpoint(
        "v1-trusted-publishers",
        "/api/v1/origins/{origin_id}/trusted-publishers",
        {"issuer": "https://gitlab.com", "repository": "a/b", "workflow": ".gitlab-ci.yml"},
        "alice",
        ok=False,
    ),  # fmt: skip
    Endpoint(
        "v1-trusted-exchange", "/api/v1/trusted-publishing/exchange", {"token": "x"}, ok=False
    ),
    # The live checks now (reads no body); within the cooldown a 429 problem: any answer < 500.
    Endpoint("v1-probe", "/api/v1/agents/{pk}/probe", {}, "alice", ok=False, strict=False),
    # A "Try it" send (tryit/): the world's agent is not opted in to messages, so a 403 problem.
    Endpoint(
        "v1-try", "/api/v1/agents/{pk}/try", {"skill": "s", "payload": {"n": 1}}, "alice", ok=False
    ),  # fmt: skip
    Endpoint("v1-imports", "/api/v1/imports", {"urls": ["https://import.doors.example/c"]}, "bob"),
    Endpoint(
        "v1-validate",
        "/api/v1/validate",
        {"card": {"name": "x", "url": "https://a.b/"}},
        strict=False,
    ),  # fmt: skip
    Endpoint(
        "v1-match", "/api/v1/schemas/match", {"payload": {"n": 1}, "limit": 5}, integer=("limit",)
    ),  # fmt: skip
    Endpoint("v1-check-message", "/api/v1/agents/{pk}/check-message", {"message": MESSAGE}),
    Endpoint(
        "v1-validate-payload",
        "/api/v1/agents/{pk}/validate-payload",
        {"schema": "Door", "payload": {"n": 1}},
    ),  # fmt: skip
    Endpoint(
        "ard-search",
        "/ard/search",
        {"query": {"text": "door", "filter": {}}, "pageSize": 5},
        integer=("pageSize",),
    ),  # fmt: skip
    Endpoint(
        "ard-explore",
        "/ard/explore",
        {"query": {"text": "door"}, "resultType": {"facets": [{"field": "tags", "limit": 5}]}},
        integer=("resultType", "facets", 0, "limit"),
    ),
    Endpoint(
        "mcp-search",
        "/mcp",
        _mcp("search_agents", {"text": "door", "limit": 5}),
        integer=("params", "arguments", "limit"),
    ),  # fmt: skip
    Endpoint("mcp-get", "/mcp", _mcp("get_agent", {"id": "{pk}"})),
    Endpoint(
        "mcp-accepting",
        "/mcp",
        _mcp("find_agents_accepting", {"payload": {"n": 1}, "limit": 5}),
        integer=("params", "arguments", "limit"),
    ),  # fmt: skip
    Endpoint("mcp-check", "/mcp", _mcp("check_message", {"agent_id": "{pk}", "message": MESSAGE})),
    Endpoint(
        "mcp-schemas",
        "/mcp",
        _mcp("list_schemas", {"prefix": "Do", "limit": 5}),
        integer=("params", "arguments", "limit"),
    ),  # fmt: skip
    Endpoint(
        "mcp-resource",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/read",
            "params": {"uri": "agent://{pk}/card"},
        },
    ),  # fmt: skip
    Endpoint("a2a-text", "/a2a", _a2a([{"text": "door agents"}])),
    Endpoint("a2a-text-0.3", "/a2a", _a2a([{"kind": "text", "text": "door"}], "message/send")),
    Endpoint(
        "a2a-data", "/a2a", _a2a([{"data": {"n": 1}, "mediaType": "application/json"}]), ok=False
    ),  # fmt: skip
    Endpoint(
        "a2a-query",
        "/a2a",
        _a2a(
            [
                {
                    "data": {"text": "door", "filters": {"tag": ["echo"]}, "limit": 5},
                    "metadata": {"mimeType": QUERY_MODE},
                }
            ]
        ),
        integer=("params", "message", "parts", 0, "data", "limit"),
    ),  # fmt: skip
    Endpoint(
        "a2a-query-0.3",
        "/a2a",
        _a2a(
            [
                {
                    "kind": "data",
                    "data": {"payload": {"n": 1}, "limit": 5},
                    "metadata": {"mimeType": QUERY_MODE},
                }
            ],
            "message/send",
        ),
        integer=("params", "message", "parts", 0, "data", "limit"),
    ),  # fmt: skip
]


ENDPOINTS += [
    Endpoint("a2a-get", "/a2a", {"jsonrpc": "2.0", "id": 4, "method": "GetTask",
                                 "params": {"id": "no-such-task"}}, ok=False),
    Endpoint("a2a-get-0.3", "/a2a", {"jsonrpc": "2.0", "id": 4, "method": "tasks/get",
                                     "params": {"id": "no-such-task"}}, ok=False),
    Endpoint("a2a-cancel", "/a2a", {"jsonrpc": "2.0", "id": 4, "method": "CancelTask",
                                    "params": {"id": "no-such-task"}}, ok=False),
    Endpoint("a2a-cancel-0.3", "/a2a", {"jsonrpc": "2.0", "id": 4, "method": "tasks/cancel",
                                        "params": {"id": "no-such-task"}}, ok=False),
]  # fmt: skip


def test_every_tool_method_and_post_route_is_probed() -> None:
    """A new MCP tool, A2A method or POST route fails here until ENDPOINTS sends it bodies."""
    from protocols import a2a, mcp_server

    sent = [endpoint.body for endpoint in ENDPOINTS if endpoint.path in ("/mcp", "/a2a")]
    tools = {body["params"]["name"] for body in sent if body.get("method") == "tools/call"}
    assert tools == {tool.name for tool in mcp_server.server._tool_manager.list_tools()}
    methods = {body["method"] for body in sent}
    assert set(a2a.SEND) | set(a2a.GET) | set(a2a.CANCEL) <= methods
    posts = set()
    for route, entry in _walk(get_resolver().url_patterns):
        view = getattr(entry.callback, "view_class", None)
        if route.startswith(SKIPPED_PREFIXES) or view is None or not hasattr(view, "post"):
            continue
        if route.startswith(ACCOUNT_PREFIX):  # HTML forms: test_account_forms_take_hostile_fields
            continue
        posts.add("/" + PARAM.sub(lambda m: "{" + m.group(2) + "}", route))
    bodies = {endpoint.path for endpoint in ENDPOINTS}
    assert posts <= bodies, posts - bodies


# --------------------------------------------------------------------------------------------
# The account pages (allauth's, issue 44): HTML forms that take form fields, not JSON. Every
# field any of them reads, with each hostile value, posted with a valid CSRF token (a refused
# token would probe nothing), anonymously and from a signed-in session.

ACCOUNT_PREFIX = "accounts/"
ACCOUNT_FIELDS = (
    "login", "password", "remember", "email", "username", "password1", "password2", "oldpassword",
    "code", "credential", "name", "passwordless", "action_add", "action_remove", "action_primary",
    "action_send", "account", "next", "process",
)  # fmt: skip
ACCOUNT_VALUES = {
    "nul": "a%00b",
    "surrogate": "%ED%A0%80",
    "bad-utf8": "%FF%FE",
    "long": "x" * 5000,
    "json": quote('{"id": "AAAA", "rawId": 1, "response": {"clientDataJSON": []}}', safe=""),
}


def _account_post_routes() -> list[str]:
    found = []
    for route, entry in _walk(get_resolver().url_patterns):
        view = getattr(entry.callback, "view_class", None)
        if route.startswith(ACCOUNT_PREFIX) and view is not None and hasattr(view, "post"):
            found.append("/" + ADMIN_PARAM.sub("x", route).replace("^", "").replace("$", ""))
    return sorted(set(found))


@pytest.fixture(scope="module")
def account_sessions(world: World) -> Iterator[dict[str, tuple[httpx.Client, str]]]:
    """Anonymous and signed in (the superuser, through the admin's form), each with its token."""
    with (
        httpx.Client(base_url=world.base, timeout=30) as anonymous,
        httpx.Client(base_url=world.base, timeout=30) as signed_in,
    ):
        anonymous.get("/accounts/login/")
        page = signed_in.get("/admin/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        form = {"username": "warden", "password": ADMIN_PASSWORD,
                "csrfmiddlewaretoken": token.group(1), "next": "/admin/"}  # fmt: skip
        login = signed_in.post("/admin/login/", data=form, headers={"Referer": world.base})
        assert login.status_code == 302, login.text[:300]
        yield {
            "anonymous": (anonymous, anonymous.cookies["csrftoken"]),
            "signed-in": (signed_in, signed_in.cookies["csrftoken"]),
        }


@pytest.mark.parametrize("who", ["anonymous", "signed-in"])
@pytest.mark.parametrize("path", _account_post_routes())
def test_account_forms_take_hostile_fields(
    world: World, account_sessions: dict[str, tuple[httpx.Client, str]], settings: Any,
    path: str, who: str,
) -> None:  # fmt: skip
    settings.ACCOUNT_RATE_LIMITS = False  # allauth's limits would answer 429 before the form
    client, token = account_sessions[who]
    if who == "signed-in" and path == "/accounts/logout/":
        pytest.skip("would end the session the other paths are probed with")
    for label, value in ACCOUNT_VALUES.items():
        body = "&".join([f"csrfmiddlewaretoken={token}", *(f"{n}={value}" for n in ACCOUNT_FIELDS)])
        response = client.post(
            path, content=body.encode(), follow_redirects=False,
            headers={"Content-Type": "application/x-www-form-urlencoded", "Referer": world.base},
        )  # fmt: skip
        check(response, f"{path} ({who}, {label})")
        assert "CSRF verification failed" not in response.text, (path, who, label)


def _ids(value: Any, world: World) -> Any:
    if isinstance(value, str):
        return value.replace("{pk}", world.public["pk"])
    if isinstance(value, dict):
        return {k: _ids(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [_ids(v, world) for v in value]
    return value


def _leaves(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of the string leaves and of the objects in a document."""
    if isinstance(value, dict):
        yield at
        for key, item in value.items():
            yield from _leaves(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*at, index))
    elif isinstance(value, str):
        yield at


def _replace(doc: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    copy = json.loads(json.dumps(doc))
    target = copy
    for step in at[:-1]:
        target = target[step]
    target[at[-1]] = new
    return copy


def _get(doc: Any, at: tuple[Any, ...]) -> Any:
    for step in at:
        doc = doc[step]
    return doc


PLACE = "PLACEHOLDERzz"


@dataclass(frozen=True)
class Variant:
    label: str
    content: bytes
    content_type: str = "application/json"
    expect: str = "any"  # "ok", "refused" or "any"


def variants(endpoint: Endpoint, world: World) -> Iterator[Variant]:
    doc = _ids(endpoint.body, world)
    rpc = endpoint.path in ("/mcp", "/a2a")
    for at in _leaves(doc):
        where = "/".join(map(str, at)) or "root"
        value = _get(doc, at)
        if at and rpc and at[-1] in ("jsonrpc", "method", "name"):
            continue  # the envelope's own words: covered by the structure cases
        if isinstance(value, dict):
            for label, key in (("nul-key", "a\\u0000"), ("surrogate-key", "\\ud800"),
                               ("unknown-member", "zzUnknown")):  # fmt: skip
                text = json.dumps(_replace(doc, at, {**value, PLACE: 1})).replace(PLACE, key)
                yield Variant(f"{label}@{where}", text.encode())
            continue
        for label, new in (("nul", "a\\u0000b"), ("surrogate", "a\\ud800b"),
                           ("low-surrogate", "\\udfff")):  # fmt: skip
            text = json.dumps(_replace(doc, at, PLACE)).replace(PLACE, new)
            # No store or encoder takes a lone surrogate: it is refused wherever it is.
            expect = "any" if label == "nul" else "refused"
            yield Variant(f"{label}@{where}", text.encode(), expect=expect)
        yield Variant(f"1mb@{where}", json.dumps(_replace(doc, at, "a" * 1_000_000)).encode())
        # Numbers JSON has no value for (Python's parser reads NaN and Infinity) and one past
        # a 64-bit integer, where a string or any value was expected.
        for label, raw in (("nan", "NaN"), ("infinity", "-Infinity"), ("inf", "1e400"),
                           ("bigint", str(10**30))):  # fmt: skip
            text = json.dumps(_replace(doc, at, PLACE)).replace(f'"{PLACE}"', raw)
            yield Variant(f"{label}@{where}", text.encode())
        deep = "[" * 5000 + "]" * 5000
        text = json.dumps(_replace(doc, at, PLACE)).replace(f'"{PLACE}"', deep)
        deep_expect = "refused" if endpoint.strict else "any"
        yield Variant(f"deep@{where}", text.encode(), expect=deep_expect)
    if endpoint.integer:
        cases = {"5.0": "ok", "2.5": "refused", str(10**30): "refused", "0": "refused",
                 "-1": "refused", '"5"': "any", "true": "refused", "1e400": "refused"}  # fmt: skip
        for raw, expect in cases.items():
            text = json.dumps(_replace(doc, endpoint.integer, PLACE)).replace(f'"{PLACE}"', raw)
            yield Variant(f"int={raw}", text.encode(), expect=expect)
    good = json.dumps(doc).encode()
    yield Variant("good", good, expect="ok" if endpoint.ok else "any")
    no = "refused" if endpoint.strict else "any"
    yield Variant("empty", b"", expect=no)
    yield Variant("null", b"null", expect=no)
    yield Variant("array", json.dumps([doc]).encode(), expect=no)
    yield Variant("string", b'"x"', expect=no)
    yield Variant("brackets", b"[" * 100_000, expect=no)
    yield Variant("deep-object", b'{"a":' * 5000 + b"1" + b"}" * 5000, expect=no)
    yield Variant("truncated", good[: len(good) // 2], expect=no)
    yield Variant("bad-utf8", good.replace(b"{", b"{\xff\xfe", 1), expect=no)
    yield Variant("nul-byte", good.replace(b"{", b"{\x00", 1), expect=no)
    yield Variant("text-plain", good, content_type="text/plain")
    form = "application/x-www-form-urlencoded"
    yield Variant("form", b"a=b&c=%00", content_type=form, expect=no)
    multipart = "multipart/form-data; boundary=x"
    yield Variant("multipart", b"--x\r\n\r\n--x--", content_type=multipart, expect=no)
    yield Variant("no-type", good, content_type="")
    yield Variant("charset-latin1", good, content_type="application/json; charset=latin-1")
    yield Variant("big", b'{"a":"' + b"a" * 5_000_000 + b'"}', expect=no)
    if rpc:
        for label, envelope in (
            ("no-method", {"jsonrpc": "2.0", "id": 1}),
            ("method-number", {"jsonrpc": "2.0", "id": 1, "method": 5}),
            ("params-array", {**doc, "params": [1]}),
            ("params-string", {**doc, "params": "x"}),
            ("id-object", {**doc, "id": {"a": 1}}),
            ("batch", [doc, doc]),
            ("empty-batch", []),
            ("version-1", {**doc, "jsonrpc": "1.0"}),
            ("unknown-method", {**doc, "method": "zz/unknown"}),
        ):
            yield Variant(label, json.dumps(envelope).encode())


# (endpoint, variant) -> a finding not fixed yet, run as a strict expected failure (none now).
KNOWN_BODY: dict[tuple[str, str], str] = {}


def _body_cases() -> list[Any]:
    # Variants are named at collection time, before the world they are sent to exists.
    public = {"pk": "00000000-0000-0000-0000-000000000000", "identifier": "", "url": ""}
    naming = World(base="", public=public, canaries={}, tokens={})
    cases = []
    for endpoint in ENDPOINTS:
        for variant in variants(endpoint, naming):
            label = variant.label
            reason = KNOWN_BODY.get((endpoint.name, label))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(endpoint, label, id=f"{endpoint.name}-{label}", marks=marks))
    return cases


@pytest.mark.parametrize(("endpoint", "label"), _body_cases())
def test_hostile_json_bodies(
    world: World, http: httpx.Client, endpoint: Endpoint, label: str
) -> None:
    variant = next(v for v in variants(endpoint, world) if v.label == label)
    path = endpoint.path.replace("{pk}", world.public["pk"])
    path = path.replace("{origin_id}", world.public["origin_id"])
    headers = {"Content-Type": variant.content_type} if variant.content_type else {}
    if endpoint.path == "/mcp":
        headers.update(MCP_HEADERS)
    if endpoint.token:
        headers["Authorization"] = f"Token {world.tokens[endpoint.token]}"
    response = http.post(path, content=variant.content, headers=headers)
    body = check(response, path)
    if endpoint.path == "/mcp" and isinstance(body, dict):
        for item in (body.get("result") or {}).get("content") or []:
            assert not LEAK.search(str(item.get("text", ""))), item
    if variant.expect == "ok":
        assert not is_error(response, body), f"{label} refused: {response.text[:300]}"
    elif variant.expect == "refused":
        assert is_error(response, body), f"{label} accepted: {response.text[:300]}"


def _bomb_requests(world: World) -> dict[str, tuple[str, Any]]:
    pk = world.bomb["pk"]
    strings = HOSTILE_STRINGS
    data_part = {"data": strings, "mediaType": "application/json;schema=bomb"}
    embedded = {**BOMB, "examples": [strings[:1000]] * 4}
    card = {
        "name": "Inline bomb", "description": "x", "version": "1",
        "supportedInterfaces": [{"url": "https://x.example/a2a", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"extensions": [{"uri": SCHEMAS_URI}]}, "schemas": {"bomb": embedded},
        "defaultInputModes": ["application/json;schema=bomb"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }  # fmt: skip
    query = {"data": {"payload": strings, "limit": 5}, "metadata": {"mimeType": QUERY_MODE}}
    return {
        "v1-match": ("/api/v1/schemas/match", {"payload": strings}),
        "v1-validate-payload": (f"/api/v1/agents/{pk}/validate-payload",
                                {"schema": "bomb", "payload": strings}),
        "v1-check-message": (f"/api/v1/agents/{pk}/check-message",
                             {"message": {"parts": [data_part]}}),
        "v1-validate": ("/api/v1/validate", {"card": card}),
        "mcp-accepting": ("/mcp", _mcp("find_agents_accepting", {"payload": strings})),
        "mcp-check": ("/mcp", _mcp("check_message", {"agent_id": pk,
                                                     "message": {"parts": [data_part]}})),
        "a2a-query": ("/a2a", _a2a([query])),
    }  # fmt: skip


@pytest.mark.parametrize(
    "door",
    ["v1-match", "v1-validate-payload", "v1-check-message", "v1-validate", "mcp-accepting",
     "mcp-check", "a2a-query"],
)  # fmt: skip
def test_schema_evaluation_is_bounded_on_every_door(
    world: World, http: httpx.Client, door: str
) -> None:
    """Anonymous, the stored bomb (bob's agent) and an inline one: each answer within the
    schema budget (REGISTRY_SCHEMA_BUDGET_SECONDS, 0.5 s), measured as this process's CPU
    (the server runs in it), never the 8-22 s of issue 17."""
    path, body = _bomb_requests(world)[door]
    started = time.process_time()
    response = http.post(path, json=body, headers=MCP_HEADERS if path == "/mcp" else {})
    cpu = time.process_time() - started
    check(response, path)
    assert cpu < 2.0, (door, cpu, response.text[:300])


# Issue 35 item 1: ONE match of a look-ahead pattern over a long string rescans the rest of the
# string from every start (quadratic), and the budget, checked between matches, cannot cut it:
# 60,000 characters cost 7.7 s of CPU on /validate, 5.3-5.6 s on the other doors (50,000). The
# string is a value under ``pattern``, a member name matched against a ``patternProperties``
# key (inside jsonschema-rs), or a member name under ``propertyNames``.
LOOK = "(?=.*x)y"
LONG_TEXT = "a" * 60_000
LOOKS = {
    "value": {"type": "object", "properties": {"q": {"type": "string", "pattern": LOOK}}},
    "key": {"type": "object", "patternProperties": {LOOK: {"type": "integer"}}},
    "name": {"type": "object", "propertyNames": {"pattern": LOOK}},
}
LOOK_PAYLOADS = {"value": {"q": LONG_TEXT}, "key": {LONG_TEXT: 1}, "name": {LONG_TEXT: 1}}


def _looks_card(schemas: dict[str, Any], examples: list[str] | None = None) -> dict[str, Any]:
    modes = [f"application/json;schema={name}" for name in schemas]
    skill = {"id": "looks", "name": "Looks", "description": "Takes long strings.",
             "tags": ["looks"], "inputModes": modes, "outputModes": ["text/plain"]}  # fmt: skip
    if examples is not None:
        skill["examples"] = examples
    return {
        "name": "Long looks", "description": "Look-around patterns.", "version": "1",
        "supportedInterfaces": [{"url": "https://looks.doors.example/a2a",
                                 "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"extensions": [{"uri": SCHEMAS_URI}]}, "schemas": schemas,
        "defaultInputModes": modes, "defaultOutputModes": ["text/plain"], "skills": [skill],
    }  # fmt: skip


@pytest.fixture(scope="module")
def looks(world: World, django_db_blocker: Any) -> str:
    """Bob's agent storing the three look-around schemas; its id (flushed with the world)."""
    from django.contrib.auth import get_user_model

    from cards.models import Agent
    from cards.rendering.store import agent_changed
    from tests.factories import agent_from_card

    with django_db_blocker.unblock():
        agent = agent_from_card(_looks_card(LOOKS), url="https://looks.doors.example/card")
        bob = get_user_model().objects.get(username="bob")
        Agent.objects.filter(pk=agent.pk).update(submitted_by=bob)
        agent_changed(agent.pk)
    return str(agent.pk)


def _look_request(door: str, kind: str, pk: str) -> tuple[str, Any]:
    payload = LOOK_PAYLOADS[kind]
    data_part = {"data": payload, "mediaType": f"application/json;schema={kind}"}
    query = {"data": {"payload": payload, "limit": 5}, "metadata": {"mimeType": QUERY_MODE}}
    card = _looks_card({kind: LOOKS[kind]}, examples=[json.dumps(payload)])
    return {
        "v1-validate": ("/api/v1/validate", {"card": card}),
        "v1-match": ("/api/v1/schemas/match", {"payload": payload}),
        "v1-validate-payload": (f"/api/v1/agents/{pk}/validate-payload",
                                {"schema": kind, "payload": payload}),
        "v1-check-message": (f"/api/v1/agents/{pk}/check-message",
                             {"message": {"parts": [data_part]}}),
        "mcp-accepting": ("/mcp", _mcp("find_agents_accepting", {"payload": payload})),
        "mcp-check": ("/mcp", _mcp("check_message", {"agent_id": pk,
                                                     "message": {"parts": [data_part]}})),
        "a2a-query": ("/a2a", _a2a([query])),
    }[door]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(LOOKS))
@pytest.mark.parametrize(
    "door",
    ["v1-validate", "v1-match", "v1-validate-payload", "v1-check-message", "mcp-accepting",
     "mcp-check", "a2a-query"],
)  # fmt: skip
def test_one_long_match_is_bounded_on_every_door(
    world: World, http: httpx.Client, looks: str, door: str, kind: str
) -> None:
    """Anonymous, a 60,000-character value or member name against ``(?=.*x)y`` (bob's stored
    schemas, or inline in a card on /validate): never matched, since one match would cost
    seconds; the answer says so (a finding on /validate, a refusal elsewhere) within well under
    the 1 s target of this process's CPU (the server runs in it)."""
    path, body = _look_request(door, kind, looks)
    started = time.process_time()
    response = http.post(path, json=body, headers=MCP_HEADERS if path == "/mcp" else {})
    cpu = time.process_time() - started
    answer = check(response, path)
    assert cpu < 0.8, (door, kind, cpu, response.text[:300])
    assert "characters" in response.text, response.text[:300]  # says why it was not matched
    if door == "v1-validate":
        codes = [f["code"] for f in answer["validation"]["findings"]]
        assert "schema.budget-exhausted" in codes, response.text[:500]
    else:
        assert is_error(response, answer), response.text[:300]


HOSTILE_URLS = [
    "javascript:alert(1)", "file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO",
    "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:6379/", "http://[::1]:5432/",
    "http://localhost/", "http://0.0.0.0/", "http://2130706433/", "http://10.0.0.1/card",
    "http://a@127.0.0.1@example.com/", "http://example.com\x00.evil/", "http://exa mple.com/",
    "https://" + "a" * 300 + ".example/", "https://example.com/" + "a" * 10_000, "", "//x", "x",
]  # fmt: skip


@pytest.mark.parametrize("door", ["submit", "import", "validate"])
def test_hostile_urls_are_refused_without_a_fetch(
    world: World, http: httpx.Client, door: str
) -> None:
    """Private, loopback and link-local addresses, other schemes and broken URLs: refused (or,
    for /validate, a failed fetch reported as findings), never fetched, never a 500."""
    headers = _as(world, "bob")
    with running_server() as server:  # a real server on loopback: it must never be asked
        server.serve("/card", b"{}")
        urls = [*HOSTILE_URLS, server.url("/card"), f"http://localhost:{server.port}/card"]
        _refuse_urls(http, door, headers, urls)
        assert server.requests == [], server.requests


def _refuse_urls(http: httpx.Client, door: str, headers: dict[str, str], urls: list[str]) -> None:
    for url in urls:
        if door == "submit":
            response = http.post("/api/v1/agents", json={"url": url}, headers=headers)
        elif door == "import":
            response = http.post("/api/v1/imports", json={"urls": [url]}, headers=headers)
        else:
            response = http.post("/api/v1/validate", json={"url": url})
        body = check(response, f"/api/v1/{door} {url[:60]!r}")
        if door == "submit":
            assert response.status_code >= 400, (url[:80], response.text[:300])
        elif door == "validate" and response.status_code < 300:
            assert body["validation"]["valid"] is False, (url[:80], response.text[:300])
        elif door == "import" and response.status_code < 300:
            job = http.get(f"/api/v1/imports/{body['id']}", headers=headers)
            counts = job.json()["counts"]
            assert counts["submitted"] == counts["crawled"] == 0, (url[:80], job.text[:300])
            assert counts["invalid"] + counts["failed"] == 1, (url[:80], job.text[:300])


# --------------------------------------------------------------------------------------------
# Ownership and visibility: alice, bob and anonymous on every door.


def _as(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Token {world.tokens[who]}"} if who != "anon" else {}


def _rpc(http: httpx.Client, path: str, doc: dict[str, Any], who: str, world: World) -> str:
    headers = {**MCP_HEADERS, **_as(world, who)}
    response = http.post(path, json=doc, headers=headers)
    check(response, path)
    return response.text


# Search words that find the canaries (their skills say "A canary.") without naming them: an
# answer that echoes the question (an A2A task's history, a search page) must not count as a leak.
SEARCH = "canary agent skill"
# Doors asked by the agent's id: their answer may repeat the id they were asked about.
BY_ID = {"v1-detail", "v1-card", "v1-history", "v1-schemas", "v1-attestation", "ard-agent",
         "catalogue-page", "badge", "mcp-get", "mcp-get-ard", "mcp-resource"}  # fmt: skip


def _reads(world: World, http: httpx.Client, agent: dict[str, str], who: str) -> dict[str, str]:
    """door -> what it answers ``who`` about ``agent`` (status and body)."""
    pk, ident = agent["pk"], agent["identifier"]
    headers = _as(world, who)
    out = {}
    gets = {
        "v1-detail": f"/api/v1/agents/{pk}",
        "v1-card": f"/api/v1/agents/{pk}/card",
        "v1-history": f"/api/v1/agents/{pk}/history",
        "v1-schemas": f"/api/v1/agents/{pk}/schemas",
        "v1-attestation": f"/api/v1/agents/{pk}/attestation",
        "v1-search": f"/api/v1/agents?q={SEARCH}",
        "v1-list": "/api/v1/agents?limit=100",
        "v1-feed": "/api/v1/agents?updated_since=2000-01-01T00:00:00Z&limit=100",
        "v1-tags": "/api/v1/tags",
        "v1-skills": "/api/v1/skills",
        "v1-modes": "/api/v1/modes",
        "v1-extensions": "/api/v1/extensions",
        "v1-schema-list": "/api/v1/schemas?limit=100",
        "ard-agent": f"/ard/agents/{quote(ident, safe=':')}" if ident else "/ard/agents/none",
        "ard-list": "/ard/agents?pageSize=100",
        "ard-feed": "/ard/agents?updatedSince=2000-01-01T00:00:00Z&pageSize=100",
        "catalogue-page": f"/agents/{pk}",
        "catalogue-home": "/",
        "catalogue-search": f"/?q={SEARCH}",
        "badge": f"/badges/{pk}.svg",
        "own-ard-manifest": "/.well-known/ard.json",
        "own-ai-catalog": "/.well-known/ai-catalog.json",
        "own-card": "/.well-known/agent-card.json",
    }
    for door, path in gets.items():
        response = http.get(path, headers=headers)
        check(response, path)
        out[door] = f"{response.status_code} {response.text}"
    facets = {"query": {"text": SEARCH}, "resultType": {"facets": [{"field": "tags"}]}}
    for door, body in (("ard-search", {"query": {"text": SEARCH}}), ("ard-explore", facets)):
        response = http.post(f"/{door.replace('-', '/')}", json=body, headers=headers)
        check(response, f"/{door.replace('-', '/')}")
        out[door] = f"{response.status_code} {response.text}"
    calls = {
        "mcp-get": _mcp("get_agent", {"id": pk}),
        "mcp-get-ard": _mcp("get_agent", {"id": ident or pk}),
        "mcp-search": _mcp("search_agents", {"text": SEARCH}),
        "mcp-resource": {"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                         "params": {"uri": f"agent://{pk}/card"}},
        "mcp-schemas": _mcp("list_schemas", {"limit": 100}),
        "mcp-accepting": _mcp("find_agents_accepting", {"payload": {"q": "x"}, "limit": 100}),
    }  # fmt: skip
    for door, doc in calls.items():
        out[door] = "200 " + _rpc(http, "/mcp", doc, who, world)
    query = {"data": {"text": SEARCH, "limit": 50}, "metadata": {"mimeType": QUERY_MODE}}
    out["a2a-text"] = "200 " + _rpc(http, "/a2a", _a2a([{"text": SEARCH}]), who, world)
    out["a2a-query"] = "200 " + _rpc(http, "/a2a", _a2a([query]), who, world)
    return out


@pytest.mark.parametrize("who", ["anon", "bob"])
@pytest.mark.parametrize("state", STATES)
def test_hidden_agents_are_invisible_on_every_door(
    world: World, http: httpx.Client, state: str, who: str
) -> None:
    agent = world.canaries[state]
    seen = _reads(world, http, agent, who)
    leaks = {}
    for door, answer in seen.items():
        words = [*secrets(state), agent["url"], agent["pk"]]
        if agent["identifier"]:
            words.append(agent["identifier"])
        if door in BY_ID:  # the question itself may be repeated
            answer = answer.replace(agent["identifier"] or agent["pk"], "").replace(agent["pk"], "")
        found = [word for word in words if word in answer]
        if found:
            at = answer.find(found[0])
            leaks[door] = (found, answer[:12] + " ... " + answer[max(0, at - 300) : at + 100])
    assert leaks == {}, json.dumps(leaks, indent=1)


def test_the_owner_and_anonymous_see_the_public_agent(world: World, http: httpx.Client) -> None:
    """The positive control: the doors above do answer with an agent that may be seen."""
    for who in ("anon", "bob", "alice"):
        seen = _reads(world, http, world.public, who)
        for door in ("v1-detail", "v1-card", "ard-agent", "catalogue-page", "badge"):
            assert seen[door].startswith("200 "), (who, door, seen[door][:200])
        assert "Doorway" in seen["mcp-get"] and "Doorway" in seen["mcp-get-ard"], who


@pytest.mark.parametrize("who", ["alice", "staff"])
@pytest.mark.parametrize("state", ["pending", "hidden", "rejected"])
def test_the_owner_and_staff_see_hidden_agents(
    world: World, http: httpx.Client, state: str, who: str
) -> None:
    pk = world.canaries[state]["pk"]
    response = http.get(f"/api/v1/agents/{pk}", headers=_as(world, who))
    assert response.status_code == 200 and secrets(state)[0] in response.text


@pytest.mark.parametrize("who", ["anon", "bob"])
def test_nobody_else_can_recrawl_delete_or_take_alices_agents(
    world: World, http: httpx.Client, who: str
) -> None:
    headers = _as(world, who)
    for agent in [world.public, *world.canaries.values()]:
        pk = agent["pk"]
        for method, path in (("POST", f"/api/v1/agents/{pk}/recrawl"),
                             ("POST", f"/api/v1/agents/{pk}/probe"),
                             ("POST", f"/api/v1/agents/{pk}/try"),
                             ("DELETE", f"/api/v1/agents/{pk}"),
                             ("PATCH", f"/api/v1/agents/{pk}"),
                             ("PUT", f"/api/v1/agents/{pk}")):  # fmt: skip
            response = http.request(method, path, json={"url": "https://x.example/"},
                                    headers=headers)  # fmt: skip
            check(response, path)
            assert response.status_code in (401, 403, 404, 405), (who, method, path, response.text)
        # Submitting or importing alice's URL neither revives, reveals nor takes her agent.
        if who == "bob":
            response = http.post("/api/v1/agents", json={"url": agent["url"]}, headers=headers)
            check(response, "/api/v1/agents")
            if agent is not world.public:
                assert response.status_code in (403, 404, 409), (agent["url"], response.text)
                assert pk not in response.text
            response = http.post("/api/v1/imports", json={"urls": [agent["url"]]}, headers=headers)
            body = check(response, "/api/v1/imports")
            if agent is not world.public and response.status_code < 300:
                job = http.get(f"/api/v1/imports/{body['id']}", headers=headers)
                assert pk not in job.text, job.text
    # Everything is as alice left it.
    mine = _as(world, "alice")
    assert http.get(f"/api/v1/agents/{world.public['pk']}", headers=mine).json()["moderation"]
    for state in ("pending", "hidden", "rejected"):
        response = http.get(f"/api/v1/agents/{world.canaries[state]['pk']}", headers=mine)
        assert response.status_code == 200, response.text
    deleted = http.get(f"/api/v1/agents/{world.canaries['deleted']['pk']}")
    assert deleted.status_code in (404, 410), deleted.text


def spellings(url: str) -> list[str]:
    """Other spellings of one of alice's URLs (``https://<state>.doors.example/card``): each is
    the URL itself in the registry's normal form (issue 35, item 2; docs/security.md)."""
    host = urlsplit(url).hostname or ""
    return [
        f"https://{host}/./card",
        f"https://{host}//card",
        f"https://{host}/%63ard",
        f"https://{host}/card/",
        f"https://{host}./card",
        f"HTTPS://{host.upper()}:443/x/../card#top",
    ]


@pytest.mark.parametrize("state", STATES)
def test_another_spelling_of_alices_url_is_hers_on_the_submit_and_import_doors(
    world: World, http: httpx.Client, state: str
) -> None:
    """Bob spells the URL of alice's agent that readers may not see another way: refused, as the
    exact spelling is, on the submit and import doors; no new agent, nothing of hers shown."""
    agent, headers = world.canaries[state], _as(world, "bob")
    urls = spellings(agent["url"])
    for url in urls:
        response = http.post("/api/v1/agents", json={"url": url}, headers=headers)
        check(response, "/api/v1/agents")
        assert response.status_code == 409, (url, response.text)
        assert agent["pk"] not in response.text
    response = http.post("/api/v1/imports", json={"urls": urls}, headers=headers)
    body = check(response, "/api/v1/imports")
    assert response.status_code < 300, response.text
    job = http.get(f"/api/v1/imports/{body['id']}", headers=headers)
    assert job.json()["counts"]["invalid"] == len(urls), job.text
    assert agent["pk"] not in job.text


def test_another_spelling_names_the_agent_already_registered(
    world: World, http: httpx.Client
) -> None:
    """The positive control: bob's spellings of alice's public agent answer with her agent, and
    alice's spellings of her own pending, hidden and rejected agents with each of them."""
    for url in spellings(world.public["url"]):
        response = http.post("/api/v1/agents", json={"url": url}, headers=_as(world, "bob"))
        check(response, "/api/v1/agents")
        assert response.status_code == 200, (url, response.text)
        assert response.json()["id"] == world.public["pk"]
    for state in ("pending", "hidden", "rejected"):
        agent = world.canaries[state]
        for url in spellings(agent["url"]):
            response = http.post("/api/v1/agents", json={"url": url}, headers=_as(world, "alice"))
            check(response, "/api/v1/agents")
            assert response.status_code == 200, (url, response.text)
            assert response.json()["id"] == agent["pk"]
            assert response.json()["moderation"]["state"] == state


def test_anyone_elses_import_jobs_are_not_shown(world: World, http: httpx.Client) -> None:
    response = http.post("/api/v1/imports", json={"urls": ["https://jobs.doors.example/card"]},
                         headers=_as(world, "alice"))  # fmt: skip
    body = check(response, "/api/v1/imports")
    assert response.status_code < 300, response.text
    path = f"/api/v1/imports/{body['id']}"
    assert http.get(path, headers=_as(world, "alice")).status_code == 200
    for who in ("anon", "bob"):
        other = http.get(path, headers=_as(world, who))
        check(other, path)
        assert other.status_code == 404 and "jobs.doors.example" not in other.text, who


# --------------------------------------------------------------------------------------------
# One answer per door (issue 39 item 7; docs/api.md, "An empty query" and "Text that is not
# UTF-8"): the same question gets the same kind of answer at REST, the catalogue, ARD, MCP and A2A.


def _empty_queries() -> dict[str, tuple[str, str, Any]]:
    query = {"data": {"text": "", "limit": 100}, "metadata": {"mimeType": QUERY_MODE}}
    return {
        "v1": ("GET", "/api/v1/agents?q=&limit=100", None),
        "v1-blank": ("GET", "/api/v1/agents?q=%20%20&limit=100", None),
        "catalogue": ("GET", "/?q=", None),
        "catalogue-blank": ("GET", "/?q=+", None),
        "ard-search": ("POST", "/ard/search", {"query": {"text": ""}, "pageSize": 100}),
        "ard-search-blank": ("POST", "/ard/search",
                             {"query": {"text": "  ", "filter": {}}, "pageSize": 100}),
        "ard-list": ("GET", "/ard/agents?filter=&pageSize=100", None),
        "mcp": ("POST", "/mcp", _mcp("search_agents", {"text": "", "limit": 100})),
        "mcp-blank": ("POST", "/mcp", _mcp("search_agents", {"text": " ", "limit": 100})),
        "a2a-text": ("POST", "/a2a", _a2a([{"text": ""}])),
        "a2a-text-0.3": ("POST", "/a2a", _a2a([{"kind": "text", "text": " "}], "message/send")),
        "a2a-no-parts": ("POST", "/a2a", _a2a([])),
        "a2a-query": ("POST", "/a2a", _a2a([query])),
    }  # fmt: skip


@pytest.mark.parametrize("door", sorted(_empty_queries()))
def test_an_empty_query_lists_every_agent_at_every_door(
    world: World, http: httpx.Client, door: str
) -> None:
    method, path, body = _empty_queries()[door]
    headers = MCP_HEADERS if path == "/mcp" else {}
    response = http.request(method, path, json=body, headers=headers)
    answer = check(response, path)
    assert response.status_code == 200 and not is_error(response, answer), response.text[:500]
    assert world.public["pk"] in response.text, response.text[:500]  # the public agent is listed
    for agent in world.canaries.values():  # and only what anonymous readers may see
        assert agent["pk"] not in response.text, (door, agent)


def test_an_empty_ard_search_is_paged_and_explore_covers_everything(
    world: World, http: httpx.Client
) -> None:
    seen: list[str] = []
    body: dict[str, Any] = {"query": {"text": ""}, "pageSize": 1}
    for _ in range(20):
        page = check(http.post("/ard/search", json=body), "/ard/search")
        seen += [item["metadata"]["registryId"] for item in page["results"]]
        assert all(item["score"] == 100 for item in page["results"]), page
        if "pageToken" not in page:
            break
        body["pageToken"] = page["pageToken"]
    assert len(seen) == len(set(seen)) > 1 and world.public["pk"] in seen, seen
    whole = {"query": {"text": ""}, "pageSize": 100}
    everything = check(http.post("/ard/search", json=whole), "/ard/search")
    assert [item["metadata"]["registryId"] for item in everything["results"]] == seen
    facets = {"resultType": {"facets": [{"field": "tags"}, {"field": "publisher"}]}}
    blank = http.post("/ard/explore", json={"query": {"text": ""}, **facets})
    assert blank.status_code == 200, blank.text
    assert blank.json() == http.post("/ard/explore", json=facets).json()


# A lead byte without its continuation: not UTF-8 however it is read.
BAD_QUERY = "%C3%28"
BAD_BYTES = b"\xc3\x28"
UNREADABLE = re.compile("\ufffd|codec|position \\d+")


def _with_bad_bytes(doc: Any) -> bytes:
    return json.dumps(doc).encode().replace(PLACE.encode(), b"door " + BAD_BYTES)


@pytest.mark.parametrize(
    "door",
    ["v1", "v1-body", "catalogue", "ard-list", "ard-search", "ard-explore", "mcp", "a2a",
     "a2a-0.3"],
)  # fmt: skip
def test_a_query_that_is_not_utf8_is_the_clients_error_at_every_door(
    world: World, http: httpx.Client, door: str
) -> None:
    """400 problem+json naming the parameter (REST), a plain message (the catalogue, no chip
    with U+FFFD), ARD's envelope naming the field, JSON-RPC's parse error -32700 naming the
    place in the body (MCP over HTTP 400, as its SDK answers a parse error; A2A over HTTP 200,
    as a2a-sdk's JSON-RPC server does)."""
    json_type = {"Content-Type": "application/json"}
    if door == "v1":
        response = http.get(f"/api/v1/agents?tag=door&q={BAD_QUERY}")
    elif door == "v1-body":
        raw = _with_bad_bytes({"payload": {"q": PLACE}})
        response = http.post("/api/v1/schemas/match", content=raw, headers=json_type)
    elif door == "catalogue":
        response = http.get(f"/?q={BAD_QUERY}")
    elif door == "ard-list":
        response = http.get(f"/ard/agents?filter={BAD_QUERY}")
    elif door in ("ard-search", "ard-explore"):
        doc: dict[str, Any] = {"query": {"text": PLACE}}
        if door == "ard-explore":
            doc["resultType"] = {"facets": [{"field": "tags"}]}
        response = http.post(f"/{door.replace('-', '/')}", content=_with_bad_bytes(doc),
                             headers=json_type)  # fmt: skip
    elif door == "mcp":
        raw = _with_bad_bytes(_mcp("search_agents", {"text": PLACE}))
        response = http.post("/mcp", content=raw, headers={**MCP_HEADERS, **json_type})
    else:
        method = "SendMessage" if door == "a2a" else "message/send"
        raw = _with_bad_bytes(_a2a([{"text": PLACE}], method))
        response = http.post("/a2a", content=raw, headers=json_type)
    path = str(response.request.url.path)
    answer = check(response, path)
    assert not UNREADABLE.search(response.text), response.text[:500]
    assert "UTF-8" in response.text, response.text[:500]
    if door == "v1":
        assert response.status_code == 400, response.text
        assert answer["errors"] == [{"pointer": "#/q", "message": "is not UTF-8 once "
                                     "percent-decoded"}], answer  # fmt: skip
        assert answer["detail"] == "q is not UTF-8 once percent-decoded", answer
    elif door == "v1-body":
        assert response.status_code == 400 and "/payload/q" in answer["detail"], answer
    elif door == "catalogue":
        assert response.status_code == 400
        assert "q is not UTF-8 once percent-decoded" in response.text
        assert 'class="chip"' not in response.text  # nothing of it shown as a filter
    elif door.startswith("ard"):
        assert response.status_code == 400 and answer["errorCode"] == "INVALID_ARGUMENT"
        field = "filter" if door == "ard-list" else "query.text"
        assert answer["details"][0]["field"] == field, answer
    else:
        assert answer["error"]["code"] == -32700, answer
        assert response.status_code == (400 if door == "mcp" else 200), response.status_code
        where = "/params/arguments/text" if door == "mcp" else "/params/message/parts/0/text"
        assert where in answer["error"]["message"], answer

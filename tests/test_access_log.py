"""The access log (issue 46): one line per answer, whoever gave it (a view, the limiter, a
middleware that failed), with the method, the route (not the path), the status, the duration,
the request id and the client as the limits count it; never a token."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import AsyncClient, Client, override_settings
from django.urls import include, path
from rest_framework.test import APIClient

from registry.logs import context, formats

pytestmark = pytest.mark.django_db

Lines = Callable[[], list[dict[str, Any]]]


def _hello(request: HttpRequest, name: str) -> JsonResponse:
    return JsonResponse({"hello": name})


async def _hello_async(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"hello": "async"})


def _broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [
    path("hello/<str:name>", _hello),
    path("hello-async", _hello_async),
    path("broken", _broken),
    path("", include("registry.urls")),
]


class _FailingMiddleware:
    """Fails before any view, as the token lookup did while PostgreSQL was down."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raise ConnectionError("the database is away")


@pytest.fixture
def lines() -> Iterator[Lines]:
    """The access lines written meanwhile, as the JSON format writes them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(context.ContextFilter())
    handler.setFormatter(formats.json_formatter())
    access = logging.getLogger("registry.access")
    access.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        access.removeHandler(handler)


@override_settings(ROOT_URLCONF=__name__)
def test_a_200_has_one_line_with_its_route_status_duration_id_and_client(lines: Lines) -> None:
    response = Client().get("/hello/secret-name?q=1", HTTP_X_REQUEST_ID="acc-1")

    assert response.status_code == 200
    [line] = lines()
    assert line["logger"] == "registry.access" and line["level"] == "INFO"
    assert (line["method"], line["route"], line["status"]) == ("GET", "hello/<str:name>", 200)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["request_id"] == "acc-1"
    assert line["client"] == "127.0.0.1"
    assert line["message"].startswith("GET hello/<str:name> 200 ")
    assert "secret-name" not in json.dumps(line)  # the route, not the path


@override_settings(ROOT_URLCONF=__name__)
def test_an_async_view_has_its_line_too(lines: Lines) -> None:
    import asyncio

    async def get() -> Any:
        return await AsyncClient().get("/hello-async", headers={"X-Request-ID": "acc-async"})

    assert asyncio.run(get()).status_code == 200
    [line] = lines()
    assert (line["route"], line["status"], line["request_id"]) == (
        "hello-async",
        200,
        "acc-async",
    )


def test_4xx_answers_of_the_api_have_their_lines(lines: Lines, client_anon: APIClient) -> None:
    assert client_anon.get("/api/v1/agents?limit=nope").status_code == 400
    assert client_anon.get("/api/v1/agents/00000000-0000-0000-0000-000000000000").status_code == 404
    assert client_anon.get("/no/such/page").status_code == 404

    bad, missing, nowhere = lines()
    assert (bad["route"], bad["status"]) == ("api/v1/agents", 400)
    assert (missing["route"], missing["status"]) == ("api/v1/agents/<uuid:pk>", 404)
    assert (nowhere["route"], nowhere["status"]) == (None, 404)
    assert nowhere["message"].startswith("GET (no route) 404 ")


def test_the_limiters_429_has_its_line_with_the_route_it_would_have_had(
    lines: Lines, settings: Any
) -> None:
    settings.REGISTRY_ANON_RATE = "2/minute"
    client = APIClient(REMOTE_ADDR="198.51.100.7")
    statuses = [client.get("/api/v1/agents").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    assert [(line["route"], line["status"]) for line in lines()] == [
        ("api/v1/agents", 200),
        ("api/v1/agents", 200),
        ("api/v1/agents", 429),
    ]
    assert {line["client"] for line in lines()} == {"198.51.100.7"}


def test_the_client_is_the_limits_key_never_a_token(lines: Lines, token: str) -> None:
    client = APIClient(REMOTE_ADDR="2001:db8:0:0:aa::1")
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/v1/agents").status_code == 200

    [line] = lines()
    assert line["client"] == "2001:db8::/64"
    assert token not in json.dumps(line)


@override_settings(ROOT_URLCONF=__name__)
def test_a_500_in_a_view_has_its_line(lines: Lines) -> None:
    response = Client(raise_request_exception=False).get("/broken")

    assert response.status_code == 500
    [line] = lines()
    assert (line["route"], line["status"]) == ("broken", 500)


def test_a_500_raised_in_a_middleware_has_its_line(lines: Lines, settings: Any) -> None:
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[:-1],
        f"{__name__}._FailingMiddleware",
        settings.MIDDLEWARE[-1],
    ]
    response = Client(raise_request_exception=False).get("/api/v1/agents", HTTP_X_REQUEST_ID="m-5")

    assert response.status_code == 500
    [line] = lines()
    assert (line["route"], line["status"], line["request_id"]) == ("api/v1/agents", 500, "m-5")


def test_uvicorns_access_line_is_kept_only_for_what_django_does_not_answer() -> None:
    from registry.logs.access import ServerAccessFilter

    def record(path: str) -> logging.LogRecord:
        args = ("127.0.0.1:5", "GET", path, "1.1", 200)
        return logging.LogRecord("uvicorn.access", logging.INFO, "", 0, "%s", args, None)

    keep = ServerAccessFilter().filter
    assert keep(record("/mcp")) and keep(record("/mcp/")) and keep(record("/mcp?x=1"))
    assert not keep(record("/api/v1/agents")) and not keep(record("/mcpx"))

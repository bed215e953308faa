"""The hot reads (registry/hot_reads.py) answer exactly what Django answers through its
middleware: the same status, headers and body, the same request series, the same access line and
the same count against the anonymous limit; anything that is not a plain anonymous GET of a hot
path goes to Django untouched. Each answer is compared with Django's own for the same environ."""

from __future__ import annotations

import http.client
import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test import RequestFactory
from django.utils import timezone
from prometheus_client import REGISTRY

from cards.models import Agent
from registry import hot_reads
from registry.hot_reads import HotReads, hot_route
from registry.metrics_requests import UNCOUNTED
from registry.rsgi import BufferedWSGI
from tests.factories import agent_from_card, minimal_card
from tests.serving_commands import granian_command, running, server_environment
from tests.support import free_port

pytestmark = pytest.mark.django_db

Answer = tuple[int, list[tuple[str, str]], bytes]
NOBODY = "00000000-0000-4000-8000-000000000000"


def environ(path: str, **extra: Any) -> dict[str, Any]:
    """The WSGI environ of ``GET path`` (``extra``: more environ keys, ``HTTP_*`` headers)."""
    extra.setdefault("HTTP_X_REQUEST_ID", "same-id-both-ways")
    env: dict[str, Any] = RequestFactory(HTTP_HOST="127.0.0.1").get(path, **extra).environ
    return env


def answer(app: Callable[..., Any], env: dict[str, Any]) -> Answer:
    """``app``'s answer to ``env`` as the server collects it (registry/rsgi.py): the status,
    the headers (by lower-case name, sorted) and the body."""
    status, headers, body = BufferedWSGI(app).call(env)
    return status, sorted((name.lower(), value) for name, value in headers), body


def samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the registry's and Django's series (requests, queries, limits), but the
    timings (a duration's sum and buckets: its count is kept) and the series' creation times."""
    out = {}
    for family in REGISTRY.collect():
        for sample in family.samples:
            name = sample.name
            if not name.startswith(("django_", "registry_")) or name.endswith("_created"):
                continue
            timed = "latency" in name or "duration" in name or name.endswith("_seconds_sum")
            if timed and not name.endswith("_count"):
                continue
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def delta(before: dict[Any, float], after: dict[Any, float]) -> dict[Any, float]:
    return {key: v - before.get(key, 0.0) for key, v in after.items() if v != before.get(key, 0.0)}


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def access_lines() -> Iterator[Lines]:
    log = logging.getLogger("registry.access")
    lines, level = Lines(), log.level
    log.addHandler(lines)
    log.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        log.removeHandler(lines)
        log.setLevel(level)


def line_fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = {key: getattr(record, key) for key in ("method", "route", "status", "client")}
    fields["request_id"] = getattr(record, "request_id", None)
    return fields


@pytest.fixture(autouse=True)
def _connections_kept() -> Iterator[None]:
    """As Django's test client does around its requests: a request's signals must not close
    the connection that holds the test's transaction."""
    from django.core import signals
    from django.db import close_old_connections

    signals_cut = [
        signal
        for signal in (signals.request_started, signals.request_finished)
        if signal.disconnect(close_old_connections)
    ]
    try:
        yield
    finally:
        for signal in signals_cut:  # as they were (the serving modules trim the first one)
            signal.connect(close_old_connections)


def make_apps() -> tuple[HotReads, WSGIHandler]:
    """Django's WSGI application, and the same with the hot reads in front (made after the
    test's settings: the middleware read some of them when they are made)."""
    django = WSGIHandler()
    hot = HotReads(django)
    assert [route.name for route in hot.routes] == ["healthz", "agent-detail"]
    return hot, django


@pytest.fixture
def apps() -> tuple[HotReads, WSGIHandler]:
    return make_apps()


def compare(hot: HotReads, django: WSGIHandler, env: Callable[[], dict[str, Any]]) -> Answer:
    """The same request both ways: the answers must be equal; the hot path must have taken it."""
    assert hot.match(env()) is not None
    mine, theirs = answer(hot, env()), answer(django, env())
    assert mine == theirs
    return mine


@pytest.fixture
def agents() -> dict[str, Agent]:
    public = agent_from_card(minimal_card(name="Public"))
    pending = agent_from_card(minimal_card(name="Pending"))
    Agent.objects.filter(pk=pending.pk).update(moderation=Agent.Moderation.PENDING)
    deleted = agent_from_card(minimal_card(name="Deleted"))
    Agent.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now())
    bare = Agent.objects.create(url="https://x.example/a", card_url="https://x.example/a")
    return {"public": public, "pending": pending, "deleted": deleted, "bare": bare}


def test_each_answer_is_djangos_own(apps: tuple[HotReads, WSGIHandler], agents: Any) -> None:
    hot, django = apps
    status, headers, body = compare(
        hot, django, lambda: environ(f"/api/v1/agents/{agents['public'].pk}")
    )
    assert status == 200 and b'"name":"Public"' in body
    assert ("x-request-id", "same-id-both-ways") in headers
    for name in ("pending", "deleted", "bare"):  # the gate: hidden is missing
        path = f"/api/v1/agents/{agents[name].pk}"
        status, _, body = compare(hot, django, lambda: environ(path))  # noqa: B023
        assert status == 404 and b"No agent with this id" in body, name
    assert compare(hot, django, lambda: environ(f"/api/v1/agents/{NOBODY}"))[0] == 404
    assert compare(hot, django, lambda: environ("/healthz"))[0] == 200
    # Accept of JSON or anything; a cookie that is not the session's.
    for extra in (
        {"HTTP_ACCEPT": "*/*"},
        {"HTTP_ACCEPT": "application/json"},
        {"HTTP_COOKIE": "theme=dark"},
    ):
        path = f"/api/v1/agents/{agents['public'].pk}"
        compare(hot, django, lambda: environ(path, **extra))  # noqa: B023


def test_over_https_with_hsts(agents: Any, settings: Any) -> None:
    settings.SECURE_HSTS_SECONDS = 3600
    hot, django = make_apps()
    status, headers, body = compare(
        hot,
        django,
        lambda: environ(f"/api/v1/agents/{agents['public'].pk}", **{"wsgi.url_scheme": "https"}),
    )
    assert ("strict-transport-security", "max-age=3600") in headers
    assert b'"self":"https://127.0.0.1/api/v1/agents/' in body


def test_the_same_series_and_access_lines(
    apps: tuple[HotReads, WSGIHandler], agents: Any, access_lines: Lines
) -> None:
    hot, django = apps
    paths = [f"/api/v1/agents/{agents['public'].pk}", f"/api/v1/agents/{NOBODY}", "/healthz"]
    counted: list[Any] = []
    for app in (hot, django):
        access_lines.records.clear()
        before = samples()
        for path in paths:
            answer(app, environ(path))
        counted.append(delta(before, samples()))
        counted.append([line_fields(r) for r in access_lines.records])
    hot_series, hot_lines, django_series, django_lines = counted
    assert hot_series == django_series
    assert hot_lines == django_lines
    assert [line["status"] for line in hot_lines] == [200, 404, 200]
    assert hot_lines[0]["route"] == "api/v1/agents/<uuid:pk>"
    by_view = "django_http_responses_total_by_status_view_method_total"
    assert (
        hot_series[(by_view, (("method", "GET"), ("status", "200"), ("view", "agent-detail")))] == 1
    )


@pytest.mark.parametrize(
    "path,extra",
    [
        ("/api/v1/agents/{pk}", {"QUERY_STRING": "fields=name"}),
        ("/api/v1/agents/{pk}", {"REQUEST_METHOD": "HEAD"}),
        ("/api/v1/agents/{pk}", {"REQUEST_METHOD": "DELETE"}),
        ("/api/v1/agents/{pk}", {"HTTP_AUTHORIZATION": "Token nope"}),
        ("/api/v1/agents/{pk}", {"HTTP_COOKIE": "sessionid=abc"}),
        ("/api/v1/agents/{pk}", {"HTTP_ACCEPT": "text/html"}),
        ("/api/v1/agents/{pk}", {"HTTP_ACCEPT": ""}),
        ("/api/v1/agents/{pk}", {"CONTENT_LENGTH": "3"}),
        ("/api/v1/agents/{pk}", {UNCOUNTED: "1"}),
        ("/api/v1/agents/{pk}/", {}),
        ("/api/v1/agents/{upper}", {}),
        ("/api/v1/agents/{pk}/card", {}),
        ("/readyz", {}),
    ],
)
def test_what_is_not_plain_goes_to_django(
    apps: tuple[HotReads, WSGIHandler], agents: Any, path: str, extra: dict[str, str]
) -> None:
    hot, django = apps
    pk = agents["public"].pk
    env = environ(path.format(pk=pk, upper=str(pk).upper()), **extra)
    assert hot.match(env) is None


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1:8000/x"])
def test_a_refused_host_is_djangos_400(
    apps: tuple[HotReads, WSGIHandler], agents: Any, host: str
) -> None:
    hot, django = apps
    path = f"/api/v1/agents/{agents['public'].pk}"
    found = hot.match(environ(path, HTTP_HOST=host))
    assert found is not None
    assert hot.serve(environ(path, HTTP_HOST=host), *found) is None  # left to Django
    mine, theirs = (
        answer(hot, environ(path, HTTP_HOST=host)),
        answer(django, environ(path, HTTP_HOST=host)),
    )
    assert mine == theirs and mine[0] == 400


def counted_in_redis(client: str) -> int:
    """The anonymous limit's count of ``client`` in this window, as Redis holds it."""
    from django.core.cache import cache

    from registry import limits

    window = int(limits.clock() // 60)
    return int(cache.get(f"limit:anon:{client}:{window}") or 0)


def test_the_limit_counts_each_request_once(agents: Any, settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "3/minute"
    hot, django = make_apps()
    path = f"/api/v1/agents/{agents['public'].pk}"
    refusals = ("registry_limiter_refusals_total", (("limit", "anon"),))
    results = []
    for app, client in ((hot, "127.0.0.1"), (django, "127.0.0.2")):
        before = samples()
        statuses = [answer(app, environ(path, REMOTE_ADDR=client))[0] for _ in range(5)]
        results.append((statuses, delta(before, samples()).get(refusals), counted_in_redis(client)))
    assert results[0] == results[1] == ([200, 200, 200, 429, 429], 2, 4)


def test_a_view_that_fails_is_answered_by_django_counted_once(agents: Any, settings: Any) -> None:
    settings.REGISTRY_ANON_RATE = "1/minute"
    hot, _ = make_apps()
    route = next(r for r in hot.routes if r.name == "agent-detail")
    calls: list[str] = []

    def failing(request: Any, **kwargs: Any) -> Any:
        calls.append("hot")
        raise ConnectionError("the database went away")

    object.__setattr__(route, "view", failing)  # this HotReads' route only
    status, _, body = answer(hot, environ(f"/api/v1/agents/{agents['public'].pk}"))
    # Django ran the real view, and the request was counted once: within 1/minute.
    assert calls == ["hot"]
    assert status == 200 and b'"name":"Public"' in body
    assert counted_in_redis("127.0.0.1") == 1


def test_off_with_a_middleware_it_does_not_know(settings: Any, caplog: Any) -> None:
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.gzip.GZipMiddleware"]
    with caplog.at_level(logging.WARNING, logger="registry.hot_reads"):
        assert HotReads(WSGIHandler()).routes == ()
    assert "hot reads off" in caplog.text
    settings.MIDDLEWARE = settings.MIDDLEWARE[:-1]
    settings.REGISTRY_HOT_READS = []
    django = WSGIHandler()
    assert hot_reads.wrap(django) is django


def test_only_routes_it_can_check() -> None:
    with pytest.raises(ImproperlyConfigured, match="takes a"):
        hot_route("badge")  # badges/<str:ident>.svg
    with pytest.raises(ImproperlyConfigured, match="not one URL pattern"):
        hot_route("no-such-name")


@pytest.mark.django_db(transaction=True)
def test_served_by_granian_as_deployed(tmp_path: Path) -> None:
    """The Dockerfile's server with the hot reads on and off: the same answers."""
    agent = agent_from_card(minimal_card(name="Served"))
    settings_dict = connection.settings_dict
    database = "postgres://{USER}@{HOST}:{PORT}/{NAME}".format(**settings_dict)
    port = free_port()
    answers = []
    for hot in ("healthz,agent-detail", "off"):
        env = server_environment(tmp_path, DATABASE_URL=database, REGISTRY_HOT_READS=hot)
        log = tmp_path / f"{hot}.log"
        with running(granian_command(port), env, log, port=port, booting="Started worker"):
            got = []
            for path in (
                f"/api/v1/agents/{agent.pk}",
                f"/api/v1/agents/{uuid.UUID(NOBODY)}",
                "/healthz",
            ):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", path, headers={"X-Request-ID": "granian-both"})
                response = conn.getresponse()
                headers = sorted(
                    (k.lower(), v) for k, v in response.getheaders() if k.lower() != "date"
                )
                got.append((response.status, headers, response.read()))
                conn.close()
            answers.append(got)
    assert answers[0] == answers[1]
    assert [status for status, _, _ in answers[0]] == [200, 404, 200]

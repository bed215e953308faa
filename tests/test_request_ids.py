"""Request ids (issue 38): taken or made by the web middleware, returned in ``X-Request-ID``, on
every line the request logs, carried into the Celery tasks it queues (a real worker through
Redis), and never mixed between concurrent requests under the servers the registry runs on."""

from __future__ import annotations

import asyncio
import http.client
import io
import json
import logging
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.http import HttpRequest, JsonResponse
from django.test import AsyncClient, Client, override_settings
from django.urls import include, path
from rest_framework.test import APIClient

from cards import tasks
from cards.models import Agent
from registry.logs import context, formats
from tests.factories import minimal_card
from tests.serving_commands import granian_command, running, server_environment
from tests.support import CardServer, free_port
from tests.workers import ROOT, wait_for

pytestmark = pytest.mark.django_db

GENERATED = re.compile(r"[0-9a-f]{16}")
Lines = Callable[[], list[dict[str, Any]]]

logger = logging.getLogger("tests.request_ids")


def _logged(request: HttpRequest) -> JsonResponse:
    logger.info("handled %s", request.path)
    return JsonResponse({"request_id": context.request_id.get()})


async def _logged_async(request: HttpRequest) -> JsonResponse:
    logger.info("handled async")
    return JsonResponse({"request_id": context.request_id.get()})


urlpatterns = [
    path("logged", _logged),
    path("logged-async", _logged_async),
    path("", include("registry.urls")),
]


@pytest.fixture
def json_lines() -> Iterator[Lines]:
    """The JSON lines the root logger writes meanwhile (the setting's filter and formatter on a
    handler of the test's own)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(context.ContextFilter())
    handler.setFormatter(formats.json_formatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)


def _lines_with(lines: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    return [line for line in lines if text in line["message"]]


# --- The web request ---------------------------------------------------------------------------


@override_settings(ROOT_URLCONF=__name__)
def test_a_safe_incoming_id_is_kept_returned_and_on_the_requests_lines(json_lines: Lines) -> None:
    response = Client().get("/logged", HTTP_X_REQUEST_ID="proxy-42.a_B")

    assert response["X-Request-ID"] == "proxy-42.a_B"
    assert response.json() == {"request_id": "proxy-42.a_B"}
    [line] = _lines_with(json_lines(), "handled /logged")
    assert line["request_id"] == "proxy-42.a_B"
    assert context.request_id.get() is None  # nothing of the request is left on this thread


@pytest.mark.parametrize(
    "unsafe",
    ["x" * 65, "has space", "new\nline", 'quote"d', "ünïcode", "semi;colon", "", "a/b"],
    ids=["too-long", "space", "newline", "quote", "non-ascii", "semicolon", "empty", "slash"],
)
@override_settings(ROOT_URLCONF=__name__)
def test_an_unsafe_incoming_id_is_replaced_by_a_new_one(unsafe: str, json_lines: Lines) -> None:
    response = Client().get("/logged", HTTP_X_REQUEST_ID=unsafe)

    given = response["X-Request-ID"]
    assert given != unsafe and GENERATED.fullmatch(given), given
    [line] = _lines_with(json_lines(), "handled /logged")
    assert line["request_id"] == given


def test_each_request_without_an_id_gets_its_own() -> None:
    client = Client()
    first = client.get("/healthz")["X-Request-ID"]
    second = client.get("/healthz")["X-Request-ID"]

    assert GENERATED.fullmatch(first) and GENERATED.fullmatch(second)
    assert first != second


def test_an_id_of_64_safe_characters_is_kept() -> None:
    longest = "A1._-" * 12 + "Zz09"
    assert len(longest) == 64
    assert Client().get("/healthz", HTTP_X_REQUEST_ID=longest)["X-Request-ID"] == longest


def test_an_error_answer_carries_the_id_too(client_anon: APIClient) -> None:
    response = client_anon.get("/api/v1/agents/not-a-uuid", HTTP_X_REQUEST_ID="lost-1")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "lost-1"


@override_settings(
    ROOT_URLCONF=__name__, MIDDLEWARE=["registry.logs.middleware.RequestIdMiddleware"]
)
def test_the_middlewares_async_half_keeps_the_id_and_returns_it(json_lines: Lines) -> None:
    """Alone before an async view, Django runs the middleware in its async mode (as the list
    stands, the middleware after it is sync, and so is it). Two requests at once under real
    servers: test_two_concurrent_requests_keep_their_own_ids_under_the_server."""

    async def two() -> tuple[Any, Any, str | None]:
        client = AsyncClient()
        given = await client.get("/logged-async", headers={"X-Request-ID": "as-1"})
        made = await client.get("/logged-async", headers={"X-Request-ID": "bad id"})
        return given, made, context.request_id.get()

    given, made, after = asyncio.run(two())

    assert given["X-Request-ID"] == "as-1" and given.json() == {"request_id": "as-1"}
    assert GENERATED.fullmatch(made["X-Request-ID"])
    assert made.json() == {"request_id": made["X-Request-ID"]}
    assert after is None
    lines = _lines_with(json_lines(), "handled async")
    assert [line["request_id"] for line in lines] == ["as-1", made["X-Request-ID"]]


# --- Tasks run in-process (eager) ----------------------------------------------------------------


def test_a_task_run_in_process_keeps_its_callers_id_and_says_its_task_and_agent(
    card_server: CardServer, loopback_allowed: None, json_lines: Lines
) -> None:
    url = card_server.serve("/card.json", json.dumps(minimal_card(name="Eager")).encode())
    agent = Agent.objects.create(url=url, card_url=url)

    with context.bound(request="caller-1"):
        assert tasks.crawl_agent.apply(args=(str(agent.pk),)).get() == "stored"
        # The task's name and agent are its own: gone once it has run, the caller's id stays.
        assert (context.task_name.get(), context.agent_id.get()) == (None, None)
        assert context.request_id.get() == "caller-1"

    [line] = _lines_with(json_lines(), f"crawl of agent {agent.pk}")
    assert line["request_id"] == "caller-1"
    assert line["task_name"] == "cards.crawl_agent"
    assert line["agent_id"] == str(agent.pk)


def test_a_task_run_in_process_outside_any_request_gets_an_id_of_its_own(
    card_server: CardServer, loopback_allowed: None, json_lines: Lines
) -> None:
    url = card_server.serve("/card.json", json.dumps(minimal_card(name="Alone")).encode())
    agent = Agent.objects.create(url=url, card_url=url)

    tasks.crawl_agent.apply(kwargs={"agent_id": str(agent.pk)}).get()

    [line] = _lines_with(json_lines(), f"crawl of agent {agent.pk}")
    assert GENERATED.fullmatch(line["request_id"])
    assert line["agent_id"] == str(agent.pk)
    assert context.request_id.get() is None


@pytest.mark.django_db(transaction=True)
def test_a_submission_crawled_in_process_logs_with_the_submissions_id(
    token: str, card_server: CardServer, loopback_allowed: None, json_lines: Lines
) -> None:
    """The crawl is queued when the submission commits, inside the request: in-process (eager)
    it runs there, with the request's id."""
    card_server.serve("/.well-known/agent-card.json", json.dumps(minimal_card()).encode())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post(
        "/api/v1/agents", {"url": card_server.origin}, format="json", HTTP_X_REQUEST_ID="sub-1"
    )

    assert response.status_code == 202 and response["X-Request-ID"] == "sub-1"
    agent_id = response.json()["id"]
    [line] = _lines_with(json_lines(), f"crawl of agent {agent_id}")
    assert (line["request_id"], line["task_name"], line["agent_id"]) == (
        "sub-1",
        "cards.crawl_agent",
        agent_id,
    )


# --- A real worker through Redis ---------------------------------------------------------------


def _json_log(tmp_path: Path) -> list[dict[str, Any]]:
    """The worker's log lines: every one a JSON object (its banner and warnings too)."""
    text = "".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.celery_worker
def test_a_submissions_crawl_by_a_real_worker_logs_the_submissions_id(
    start_worker: Callable[..., subprocess.Popen[bytes]],
    token: str,
    card_server: CardServer,
    loopback_allowed: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cards.services import enqueue_crawl

    monkeypatch.setenv("REGISTRY_LOG_FORMAT", "json")  # the worker's environment
    worker = start_worker()
    card_server.serve(
        "/.well-known/agent-card.json", json.dumps(minimal_card(name="Traced")).encode()
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post(
        "/api/v1/agents", {"url": card_server.origin}, format="json", HTTP_X_REQUEST_ID="web-7f3a"
    )
    assert response.status_code == 202
    assert response["X-Request-ID"] == "web-7f3a"
    agent_id = response.json()["id"]
    crawled = f"crawl of agent {agent_id}: "

    def logged(count: int) -> bool:
        assert worker.poll() is None, "the worker exited; see worker-0.log in the tmp_path"
        return len(_lines_with(_json_log(tmp_path), crawled)) >= count

    assert wait_for(lambda: logged(1)), _json_log(tmp_path)
    [line] = _lines_with(_json_log(tmp_path), crawled)
    assert line["request_id"] == "web-7f3a"
    assert line["task_name"] == "cards.crawl_agent"
    assert line["agent_id"] == agent_id
    assert line["logger"] == "cards.tasks" and line["level"] == "INFO"
    assert Agent.objects.get(pk=agent_id).status == "ok"
    # Celery's own lines are JSON too (the handler is Celery's, the format the setting's).
    assert any(line["message"].endswith(" ready.") for line in _json_log(tmp_path))

    # The task's own lines: received (read from the message in the worker's main process) and
    # succeeded, with the submission's id, its task id and the duration.
    steps = [
        line
        for line in _json_log(tmp_path)
        if line["logger"] == "registry.tasks" and line["task_name"] == "cards.crawl_agent"
    ]
    received, succeeded = steps[:2]
    assert (received["event"], succeeded["event"]) == ("received", "succeeded")
    assert received["request_id"] == succeeded["request_id"] == "web-7f3a"
    assert received["task_id"] == succeeded["task_id"]
    assert received["origin"].startswith("gen")  # the process that queued it (this one)
    assert received["message"].endswith(f"received (queued by {received['origin']})")
    assert isinstance(succeeded["duration_ms"], float)

    # Queued outside any request (as beat and the sweep do): the task gets an id of its own.
    assert enqueue_crawl(agent_id)
    assert wait_for(lambda: logged(2)), _json_log(tmp_path)
    second = _lines_with(_json_log(tmp_path), crawled)[1]
    assert GENERATED.fullmatch(second["request_id"]) and second["request_id"] != "web-7f3a"
    assert second["agent_id"] == agent_id


# --- Concurrent requests under the real servers -------------------------------------------------


def _server_command(server: str, port: int) -> tuple[list[str], str]:
    """The server's command and the line each of its workers logs once it serves."""
    if server == "granian":  # the Dockerfile's command, one worker of 4 threads
        return granian_command(port, workers="1"), "Started worker"
    # `make run`'s (and, under gunicorn, the protocols service's) ASGI application
    command = [sys.executable, "-m", "uvicorn", "registry.asgi:application"]
    return [*command, "--host", "127.0.0.1", "--port", str(port)], "Uvicorn running on"


@pytest.fixture(scope="module", params=["uvicorn", "granian"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int, Path]]:
    """The server on SQLite (the views under test need no database), logging JSON, with the
    views of tests/log_server.py."""
    port = free_port()
    directory = tmp_path_factory.mktemp(request.param)
    log = directory / "server.log"
    env = server_environment(
        directory,
        DJANGO_SETTINGS_MODULE="tests.log_server_settings",
        REGISTRY_LOG_FORMAT="json",
        PYTHONPATH=str(ROOT),
    )
    command, booting = _server_command(request.param, port)
    with running(command, env, log, port=port, booting=booting, workers=1):
        yield request.param, port, log


def _get(port: int, target: str, rid: str, answers: dict[str, Any]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", target, headers={"X-Request-ID": rid})
        response = connection.getresponse()
        answers[rid] = (response.status, response.getheader("X-Request-ID"), response.read())
    finally:
        connection.close()


@pytest.mark.parametrize("view", ["together", "together-async"])
def test_two_concurrent_requests_keep_their_own_ids_under_the_server(
    server: tuple[str, int, Path], view: str
) -> None:
    name, port, log = server
    if name == "granian" and view == "together-async":
        pytest.skip("granian serves the WSGI application: an async view runs on a loop of its own")
    ids = {f"{view}.{letter}": f"{name}-{view}-{letter}" for letter in "AB"}
    answers: dict[str, Any] = {}
    threads = [
        threading.Thread(target=_get, args=(port, f"/{view}?who={who}", rid, answers))
        for who, rid in ids.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    for who, rid in ids.items():
        status, header, body = answers[rid]
        assert status == 200, body  # a 500: the two requests were not in flight together
        assert header == rid
        assert json.loads(body) == {"who": who, "request_id": rid}

    def lines(text: str) -> list[dict[str, Any]]:
        return [line for line in _json_lines(log) if text in line["message"]]

    # Each request's two lines (before and after the other's arrival), with its own id.
    assert wait_for(lambda: all(len(lines(f"together {who} ")) == 2 for who in ids), 5)
    for who, rid in ids.items():
        assert [line["request_id"] for line in lines(f"together {who} ")] == [rid, rid]
    # One access line each, the registry's, with the request's id (uvicorn's own is left out for
    # what Django answers; granian writes none).
    access = [line for line in _json_lines(log) if line["logger"].endswith("access")]
    for rid in ids.values():
        [line] = [a for a in access if a["request_id"] == rid]
        assert (line["logger"], line["route"], line["status"]) == ("registry.access", view, 200)


def _json_lines(log: Path) -> list[dict[str, Any]]:
    """A server's log lines that a logger wrote after the application was loaded (JSON); the
    server's lines before that are its own (text)."""
    text = log.read_text(errors="replace")
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# --- Follow-ups queued by beat (issue 46) --------------------------------------------------------


def _published(name: str, agent_id: str) -> dict[str, Any]:
    """The headers a task queued now would carry (the receiver Celery calls before sending)."""
    from registry.logs import task_signals

    headers: dict[str, Any] = {}
    task_signals._stamp_request_id(sender=name, body=((agent_id,), {}, {}), headers=headers)
    return headers


def _run_in_worker(task: Any, agent_id: str, headers: dict[str, Any]) -> None:
    """What the worker does around a task that came with ``headers``: the signals' receivers
    entering and leaving its context."""
    from registry.logs import task_signals

    task.push_request(id="t-1", is_eager=False, **headers)
    try:
        task_signals._enter_task(task=task, args=(agent_id,), kwargs={})
        task_signals._leave_task(task=task)
    finally:
        task.pop_request()


def test_a_submissions_id_follows_its_agent_into_the_live_check_beat_queues() -> None:
    from registry.logs import follow_ups, task_signals

    agent_id = "5e2e7d7d-b4e3-4e1c-b488-3af6e7f2cad0"
    web = follow_ups.from_web.set(True)
    try:
        with context.bound(request="web-9"):
            crawl = _published("cards.crawl_agent", agent_id)
    finally:
        follow_ups.from_web.reset(web)
    assert crawl == {task_signals.HEADER: "web-9", follow_ups.SOURCE_HEADER: "web"}
    _run_in_worker(tasks.crawl_agent, agent_id, crawl)  # the crawl remembers its id

    with context.bound(request="sweep-1", task="live.sweep"):  # beat's sweep, minutes later
        first = _published("live.check_agent", agent_id)
        later = _published("live.check_agent", agent_id)
        other = _published("live.check_agent", "00000000-0000-0000-0000-000000000001")

    assert first[task_signals.HEADER] == "web-9"
    assert first[follow_ups.SOURCE_HEADER] == "web"
    assert later == {task_signals.HEADER: "sweep-1"}  # once: the next checks are the sweep's
    assert other == {task_signals.HEADER: "sweep-1"}


def test_a_crawl_queued_by_beat_is_not_remembered_for_the_follow_ups() -> None:
    from registry.logs import task_signals

    agent_id = "5e2e7d7d-b4e3-4e1c-b488-3af6e7f2cad1"
    with context.bound(request="sweep-2", task="cards.sweep_due"):
        crawl = _published("cards.crawl_agent", agent_id)
    _run_in_worker(tasks.crawl_agent, agent_id, crawl)

    with context.bound(request="sweep-3", task="live.sweep"):
        assert _published("live.check_agent", agent_id) == {task_signals.HEADER: "sweep-3"}

"""Logs say what happened, each thing once (issue 18): real requests and a real crawl."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
from django.test import Client, override_settings
from django.urls import include, path
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cards import tasks
from cards.models import Agent
from registry.celery import app as celery_app
from registry.logs import context
from tests.support import CardServer

pytestmark = pytest.mark.django_db


class _Broken(APIView):
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    def get(self, request: Request) -> Response:
        raise RuntimeError("a bug in a view")


class _Refusing(APIView):
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    def get(self, request: Request) -> Response:
        raise ValidationError({"x": ["is not accepted"]})


urlpatterns = [
    path("broken", _Broken.as_view()),
    path("refusing", _Refusing.as_view()),
    path("", include("registry.urls")),
]


@override_settings(ROOT_URLCONF=__name__)
def test_a_500_is_logged_once_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        response = client.get("/broken")

    assert response.status_code == 500
    assert response["Content-Type"] == "application/problem+json"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].getMessage() == "Internal Server Error: /broken"
    assert errors[0].exc_info is not None


@override_settings(ROOT_URLCONF=__name__)
def test_a_400_is_not_logged_again_by_django(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    with caplog.at_level(logging.INFO):
        response = client.get("/refusing")

    assert response.status_code == 400
    # The access log (runserver, gunicorn) has the request's one line; nothing else repeats it.
    assert not [r for r in caplog.records if "Bad Request" in r.getMessage()]


def test_a_crawl_that_recorded_an_error_is_logged_as_a_failure_with_its_reason(
    card_server: CardServer, loopback_allowed: None, caplog: pytest.LogCaptureFixture
) -> None:
    url = card_server.serve("/gone.json", b'{"error": "no"}', status=403)
    agent = Agent.objects.create(url=url, card_url=url)

    with caplog.at_level(logging.INFO):
        outcome = tasks.crawl_agent.apply(args=(str(agent.pk),)).get()

    agent.refresh_from_db()
    assert outcome == "error" and agent.last_error
    lines = [r.getMessage() for r in caplog.records if str(agent.pk) in r.getMessage()]
    assert any(line.startswith(f"crawl of agent {agent.pk} failed: ") for line in lines), lines
    assert any(agent.last_error in line and "next try" in line for line in lines)
    assert not any("succeeded" in line for line in lines)


def test_quiet_loggers_are_configured() -> None:
    # Celery's "Task ... succeeded in ...: 'error'", its failure and "received" lines (the
    # registry's task lines say them, below) and kombu's "No hostname was supplied" (no broker
    # configured: eager tasks) are not written.
    assert not logging.getLogger("celery.app.trace").isEnabledFor(logging.ERROR)
    assert not logging.getLogger("celery.worker.strategy").isEnabledFor(logging.INFO)
    assert not logging.getLogger("kombu.connection").isEnabledFor(logging.WARNING)


# --- Task lines (issue 46): received, succeeded, retried, failed -------------------------------


@celery_app.task(name="tests.logging.adds", bind=True)
def _adds(self: Any, a: int, b: int) -> int:
    return a + b


@celery_app.task(name="tests.logging.breaks")
def _breaks() -> None:
    raise LookupError("nothing here")


@celery_app.task(name="tests.logging.flaky", bind=True, max_retries=1, default_retry_delay=0)
def _flaky(self: Any) -> str:
    if self.request.retries == 0:
        raise self.retry(exc=TimeoutError("origin slow"))
    return "ok"


def _task_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "registry.tasks"]


def test_a_task_that_succeeds_has_one_line_with_its_id_and_duration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO), context.bound(request="web-1"):
        result = _adds.apply(args=(2, 3))

    assert result.get() == 5
    [line] = _task_lines(caplog)
    fields = line.__dict__
    assert line.levelno == logging.INFO and fields["event"] == "succeeded"
    assert fields["task_id"] == result.id and isinstance(fields["duration_ms"], float)
    assert line.getMessage().startswith(f"task tests.logging.adds[{result.id}] succeeded in ")
    assert context.ContextFilter().filter(line) and fields["request_id"] == "web-1"
    assert fields["task_name"] == "tests.logging.adds"


def test_a_task_that_fails_is_told_once_with_its_exception_class(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        result = _breaks.apply()

    assert result.failed()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.name for r in errors] == ["registry.tasks"]  # not Celery's too
    [line] = errors
    assert line.__dict__["event"] == "failed" and line.__dict__["exception_class"] == "LookupError"
    assert line.getMessage().endswith("failed: LookupError: nothing here")
    assert line.exc_info is not None  # the traceback, once


def test_a_retry_is_told_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        result = _flaky.apply()

    assert result.get() == "ok"
    retried = [r for r in _task_lines(caplog) if r.__dict__["event"] == "retried"]
    [line] = retried
    assert line.levelno == logging.WARNING
    assert line.__dict__["reason"] == "TimeoutError: origin slow"
    assert [r.__dict__["event"] for r in _task_lines(caplog)] == ["retried", "succeeded"]


# --- A repeated failure's traceback, once a minute (issue 46) ----------------------------------


def _failure(log: logging.Logger, where: int) -> None:
    try:
        if where == 1:
            raise ConnectionError("database away")
        raise ConnectionError("database away")
    except ConnectionError:
        log.exception("Internal Server Error: %s", "/api/v1/agents")


def test_a_repeated_failure_shows_its_traceback_once_a_minute() -> None:
    from registry.logs.tracebacks import TracebackThrottle

    now = [1000.0]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(TracebackThrottle(clock=lambda: now[0]))
    log = logging.Logger("tests.tracebacks", logging.INFO)
    log.addHandler(handler)

    _failure(log, 1)
    first = stream.getvalue()
    _failure(log, 1)
    second = stream.getvalue()[len(first) :]
    _failure(log, 2)  # raised elsewhere: its own traceback
    third = stream.getvalue()[len(first) + len(second) :]
    now[0] += 61
    _failure(log, 1)
    fourth = stream.getvalue()[len(first) + len(second) + len(third) :]

    assert "Traceback (most recent call last)" in first and len(first.splitlines()) > 3
    assert second == (
        "Internal Server Error: /api/v1/agents (ConnectionError: database away; "
        "traceback shown at most once a minute)\n"
    )
    assert "Traceback (most recent call last)" in third
    assert "Traceback (most recent call last)" in fourth


def test_the_console_handler_throttles_tracebacks() -> None:
    from registry.logs.tracebacks import TracebackThrottle

    handlers = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    assert handlers and any(isinstance(f, TracebackThrottle) for f in handlers[0].filters)

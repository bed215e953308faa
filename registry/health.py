"""Liveness and readiness probes."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

_ALIVE = b'{"status": "ok"}'  # what JsonResponse({"status": "ok"}) says, encoded once


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_ALIVE, content_type="application/json")


def _database_ok() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means not ready
        return f"database unreachable: {exc.__class__.__name__}"
    return None


def _broker_ok() -> str | None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    from registry.celery import app  # lazy: importing it configures Celery, needed here only

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # kombu raises many types
        return f"broker unreachable: {exc.__class__.__name__}"
    return None


def readyz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database_ok(), "broker": _broker_ok()}
    problems = [reason for reason in checks.values() if reason]
    body: dict[str, object] = {
        name: ("ok" if reason is None else reason) for name, reason in checks.items()
    }
    if problems:
        body.update(
            {
                "type": "/problems/not-ready",
                "title": "Not ready",
                "status": 503,
                "detail": "; ".join(problems),
            }
        )
        return JsonResponse(body, status=503, content_type="application/problem+json")
    return JsonResponse({"status": "ready", **body})

"""URLconf of the web servers started by tests/test_request_ids.py (tests/log_server_settings.py):
the registry's own, plus two views that hold each request until a second one is in flight, so
that two requests are served at the same time and their log lines can be told apart."""

from __future__ import annotations

import asyncio
import logging
import threading

from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from registry.logs import context

logger = logging.getLogger("tests.log_server")
# Two requests meet here; one alone waits 10 s and fails (a 500): they did not overlap.
_threads = threading.Barrier(2, timeout=10)
_tasks = asyncio.Barrier(2)


def together(request: HttpRequest) -> JsonResponse:
    who = request.GET.get("who", "")
    logger.info("together %s arrived", who)
    _threads.wait()
    logger.info("together %s leaves", who)
    return JsonResponse({"who": who, "request_id": context.request_id.get()})


async def together_async(request: HttpRequest) -> JsonResponse:
    who = request.GET.get("who", "")
    logger.info("together %s arrived", who)
    async with asyncio.timeout(10):
        await _tasks.wait()
    logger.info("together %s leaves", who)
    return JsonResponse({"who": who, "request_id": context.request_id.get()})


urlpatterns = [
    path("together", together),
    path("together-async", together_async),
    path("", include("registry.urls")),
]

"""Each web request's id: taken from ``X-Request-ID`` when it is safe, made otherwise.

The id is set (``registry.logs.context.request_id``) before anything else of the request runs,
so every line the request logs carries it, and the tasks it queues take it along
(``registry.logs.task_signals``); the response returns it in ``X-Request-ID``, so a client or a
proxy can quote it. First in ``MIDDLEWARE``.

The id is put back as it was when the response leaves: a thread serves one request after
another (WSGI, and Django's sync code under ASGI), and nothing of one request may tag the lines
that thread writes afterwards. The value lives in a contextvar, so concurrent requests (other
threads, other asyncio tasks) never see each other's. Sync and async: Django picks the mode
the middleware after it needs (sync as the list stands), so no request pays a thread hop for it.

It writes the request's access line too (``registry.logs.access``), with the id still set: being
first, it sees every answer, the ones the middleware after it gives included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

from registry.logs import access, context, follow_ups

HEADER = "X-Request-ID"
_META = "HTTP_X_REQUEST_ID"


def request_id_of(request: HttpRequest) -> str:
    """The request's id: the client's when it is safe to keep, else a new one."""
    return context.accepted_request_id(request.META.get(_META)) or context.new_request_id()


class RequestIdMiddleware:
    """Sets the request id for the request's log lines and returns it in ``X-Request-ID``."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        rid = request_id_of(request)
        start = access.started()
        token = context.request_id.set(rid)
        web = follow_ups.from_web.set(True)
        response: HttpResponseBase | None = None
        try:
            response = self.get_response(request)
            response[HEADER] = rid
        finally:
            access.log_answer(request, response, start)
            follow_ups.from_web.reset(web)
            context.request_id.reset(token)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        rid = request_id_of(request)
        start = access.started()
        token = context.request_id.set(rid)
        web = follow_ups.from_web.set(True)
        response: HttpResponseBase | None = None
        try:
            get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = self.get_response
            response = await get_response(request)
            response[HEADER] = rid
        finally:
            access.log_answer(request, response, start)
            follow_ups.from_web.reset(web)
            context.request_id.reset(token)
        return response

"""Django's message framework, made only when a request uses it.

The admin needs ``MessageMiddleware``; the stock one builds the message storage (a cookie signer
and a session lookup) for every request, although only admin pages read or add messages: about
7% of the CPU of a health check or a fetch by id. Here the storage is made on first use; a
request that never touched it leaves the response alone, as the stock ``update`` would (it
writes only messages that were read or added).
"""

from __future__ import annotations

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from registry.lazy import never_made


class LazyMessageMiddleware(MessageMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        request._messages = SimpleLazyObject(lambda: default_storage(request))  # type: ignore[attr-defined]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if never_made(getattr(request, "_messages", None)):
            return response  # never read nor added to: nothing to store
        return super().process_response(request, response)

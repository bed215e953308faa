"""Django's sessions, made only when a request uses them.

Only the admin (and whatever signs in through it) reads ``request.session``; the stock
``SessionMiddleware`` parses the cookies and builds a session store for every request, API
reads and health checks included. Here ``request.session`` is a lazy object made on first use.
A request that never touched it gets the response the stock ``process_response`` would give
it: with no session built, the session was neither accessed nor modified, and it is empty only
when the request carried no session cookie, so no cookie is set, deleted or varied on.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from registry.lazy import never_made


class LazySessionMiddleware(SessionMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        store = self.SessionStore
        request.session = SimpleLazyObject(  # type: ignore[assignment]
            lambda: store(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
        )

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if never_made(getattr(request, "session", None)):
            return response  # never read nor written: nothing to save, set or vary on
        return super().process_response(request, response)

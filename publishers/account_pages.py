"""The Content-Security-Policy of the account pages (allauth's, under /accounts/).

The catalogue's pages allow no script at all (cards.catalogue.common.CONTENT_SECURITY_POLICY).
allauth's pages render in the catalogue's look (publishers/templates/allauth/layouts/) and some
bring allauth's own scripts: passkey sign-in on the login page, WebAuthn and the recovery codes
on the two-factor pages. Those files are served from the registry's origin, and allauth passes
their data in ``<script type="application/json">`` blocks, which a browser never runs. So the
account pages get the catalogue's policy for pages with scripts (SCRIPT_POLICY: scripts from
the registry's origin only, nothing inline, no eval), and every other page keeps its own.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from cards.catalogue.common import SCRIPT_POLICY

PREFIX = "/accounts/"


class AccountPagePolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(PREFIX) and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = SCRIPT_POLICY
            response.setdefault("X-Content-Type-Options", "nosniff")
            response.setdefault("Referrer-Policy", "same-origin")
        return response

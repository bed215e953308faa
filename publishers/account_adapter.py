"""allauth's account adapter, counting a client as every other limit of the registry does.

allauth's rate limits (ACCOUNT_RATE_LIMITS: sign-in, failed sign-ins, sign-up, password reset,
confirmation e-mails) are kept per client address. Its own reading of the address knows nothing
of REGISTRY_TRUSTED_PROXIES; here the address is registry.limits.client_address's: the
connection's, or the nearest untrusted X-Forwarded-For hop behind a trusted proxy, and an IPv6
client counted by its network (docs/security.md).

An e-mail that cannot be sent (no SMTP server reachable, a refusal) is logged and the reader is
told, never a 500: the account and what the request changed are kept, and the e-mail can be
asked for again ("Resend" on the e-mail page, or a new password reset).
"""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from registry.limits import client_address

log = logging.getLogger(__name__)
NOT_SENT = (
    "The e-mail could not be sent just now; nothing else was lost. Ask for it again in a few "
    "minutes, or tell the registry's operator (its mail server may be down)."
)


class AccountAdapter(DefaultAccountAdapter):
    def send_mail(self, template_prefix: str, email: str, context: dict[str, Any]) -> None:
        try:
            super().send_mail(template_prefix, email, context)
        except (OSError, smtplib.SMTPException) as exc:
            log.error("e-mail %s not sent: %s", template_prefix.rsplit("/", 1)[-1], exc)
            request = context.get("request") or getattr(self, "request", None)
            if request is not None:
                messages.error(request, NOT_SENT)

    def get_client_ip(self, request: HttpRequest) -> str:
        address = client_address(request)
        if not address:
            raise PermissionDenied("Unable to determine the client's address")
        return address

"""allauth's account adapter, counting a client as every other limit of the registry does.

allauth's rate limits (ACCOUNT_RATE_LIMITS: sign-in, failed sign-ins, sign-up, password reset,
confirmation e-mails) are kept per client address. Its own reading of the address knows nothing
of REGISTRY_TRUSTED_PROXIES; here the address is registry.limits.client_address's: the
connection's, or the nearest untrusted X-Forwarded-For hop behind a trusted proxy, and an IPv6
client counted by its network (docs/security.md).
"""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from registry.limits import client_address


class AccountAdapter(DefaultAccountAdapter):
    def get_client_ip(self, request: HttpRequest) -> str:
        address = client_address(request)
        if not address:
            raise PermissionDenied("Unable to determine the client's address")
        return address

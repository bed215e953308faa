"""allauth's social-account adapter: a provider that is not configured is a 404, not a 500.

GitHub and OpenID Connect sign-in are installed always and turned on by configuration
(registry/settings/accounts.py). allauth answers ``/accounts/github/login/`` without GitHub's
client id and secret by raising ``SocialApp.DoesNotExist`` out of the view: a server error. Here
that exception is also an ``Http404``, so the page is the registry's "not found" (allauth's own
code, which catches ``DoesNotExist``, is unchanged).
"""

from __future__ import annotations

from typing import Any

from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp
from django.http import Http404, HttpRequest


class ProviderNotConfigured(SocialApp.DoesNotExist, Http404):
    """No app is configured for this provider: nobody can sign in with it here."""


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def get_app(self, request: HttpRequest, provider: str, client_id: str | None = None) -> Any:
        try:
            return super().get_app(request, provider=provider, client_id=client_id)
        except SocialApp.DoesNotExist:
            raise ProviderNotConfigured(f"sign-in with {provider!r} is not configured") from None

"""Routes of the tokens an account manages (issue 44 §2): the API under /api/v1/ and the
catalogue's page under /account/ (both included by registry/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from publishers import token_api, token_pages

api_urlpatterns: list[URLPattern | URLResolver] = [  # under /api/v1/
    path("tokens", token_api.TokenListCreateView.as_view(), name="token-list"),
    path("tokens/<int:token_id>", token_api.TokenDetailView.as_view(), name="token-detail"),
]
page_urlpatterns: list[URLPattern | URLResolver] = [  # the catalogue's pages, under /account/
    path("tokens", token_pages.tokens_page, name="account-tokens"),
    path("tokens/<int:token_id>/revoke", token_pages.revoke_page, name="account-token-revoke"),
]

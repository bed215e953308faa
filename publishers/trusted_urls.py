"""Routes of trusted publishing (issue 45 §1), under /api/v1/ (included by registry/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from publishers import trusted_api

api_urlpatterns: list[URLPattern | URLResolver] = [  # under /api/v1/
    path(
        "origins/<int:origin_id>/trusted-publishers",
        trusted_api.TrustedPublisherListView.as_view(),
        name="trusted-publishers",
    ),
    path(
        "origins/<int:origin_id>/trusted-publishers/<int:publisher_id>",
        trusted_api.TrustedPublisherDetailView.as_view(),
        name="trusted-publisher",
    ),
    path(
        "trusted-publishing/exchange",
        trusted_api.ExchangeView.as_view(),
        name="trusted-publishing-exchange",
    ),
]

"""Routes of proven origins (issue 44 §3): the API under /api/v1/, the page under /account/."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from publishers import origin_api, origin_pages

api_urlpatterns: list[URLPattern | URLResolver] = [  # under /api/v1/
    path("origins", origin_api.OriginListView.as_view(), name="origins"),
    path("origins/<int:origin_id>", origin_api.OriginDetailView.as_view(), name="origin"),
    path(
        "origins/<int:origin_id>/verify",
        origin_api.OriginVerifyView.as_view(),
        name="origin-verify",
    ),
]
page_urlpatterns: list[URLPattern | URLResolver] = [  # the catalogue's pages, under /account/
    path("origins", origin_pages.origins_page, name="account-origins"),
    path(
        "origins/<int:origin_id>/verify", origin_pages.verify_origin, name="account-origin-verify"
    ),
    path(
        "origins/<int:origin_id>/remove", origin_pages.remove_origin, name="account-origin-remove"
    ),
]

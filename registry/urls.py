from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from cards import catalogue
from cards.attestation_views import jwks_view
from cards.badge_views import badge_view
from live.api import AgentProbeView
from publishers import origin_urls, token_urls, trusted_urls
from registry import health
from registry.login_throttle import ThrottledAdminLoginForm
from registry.metrics_view import metrics_view
from tryit.api import AgentTryView
from tryit.views import try_page

# The admin's login form says when failed logins have locked an account or a client out.
admin.site.login_form = ThrottledAdminLoginForm


def index(request: HttpRequest) -> JsonResponse:
    base = request.build_absolute_uri("/")
    return JsonResponse(
        {
            "name": "A2A agent card registry",
            "catalogue": base,
            "agents": base + "api/v1/agents",
            "docs": base + "api/docs",
            "openapi": base + "api/schema",
        }
    )


# The docs page answers GET and HEAD only: DRF's OPTIONS answer would render its metadata
# through the page's HTML template renderer, which has no template for it (a 500).
api_docs = require_safe(SpectacularSwaggerView.as_view(url_name="openapi-schema"))
# ARD's own document (protocols/ard/openapi.py) in the same UI, linked from the v1 document.
ard_docs = require_safe(SpectacularSwaggerView.as_view(url="/ard/openapi.json"))

urlpatterns = [
    # Probes first: they are asked most often and must not walk every route before theirs.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),  # the monitoring's; a 404 to anyone else
    path("", catalogue.home, name="catalogue"),
    path("favicon.ico", catalogue.favicon, name="favicon"),
    path("agents/<uuid:pk>", catalogue.agent_page, name="catalogue-agent"),
    path("agents/<uuid:pk>/try", try_page, name="catalogue-try"),  # one skill's form
    # Anything else under /agents/ is the catalogue's own 404, with DEBUG on too (issue 39).
    path("agents/<path:rest>", catalogue.no_such_agent_page, name="catalogue-no-agent"),
    path("my-agents", catalogue.my_agents, name="catalogue-mine"),
    path("robots.txt", catalogue.robots_txt, name="robots-txt"),
    path("api/v1/", index, name="index"),
    path("api/v1/agents/<uuid:pk>/probe", AgentProbeView.as_view(), name="agent-probe"),
    path("api/v1/agents/<uuid:pk>/try", AgentTryView.as_view(), name="agent-try"),
    path("api/v1/", include(token_urls.api_urlpatterns)),
    path("api/v1/", include(origin_urls.api_urlpatterns)),
    path("api/v1/", include(trusted_urls.api_urlpatterns)),
    path("api/v1/", include("cards.api.urls")),
    path("api/v1/", include("schemas_app.api_urls")),
    path("api/schema", SpectacularAPIView.as_view(), name="openapi-schema"),
    path("api/docs", api_docs, name="api-docs"),
    path("api/docs/ard", ard_docs, name="api-docs-ard"),
    path("admin/", admin.site.urls),
    # Publisher accounts (issue 44): allauth's sign-up, sign-in, e-mail, MFA and social sign-in,
    # then the account's own pages (tokens, origins).
    path("accounts/", include("allauth.urls")),
    path("account/", include(token_urls.page_urlpatterns)),
    path("account/", include(origin_urls.page_urlpatterns)),
    path("badges/<str:ident>.svg", badge_view, name="badge"),
    path(".well-known/jwks.json", jwks_view, name="jwks"),
    path("", include("protocols.urls")),
]

handler400 = "registry.errors.bad_request_view"
# People get the catalogue's 404 page, programs their door's JSON (cards/catalogue/not_found.py).
handler404 = "cards.catalogue.page_not_found"
# Not Django's: the per-client limit (registry/limits.py) asks it for a page for people.
handler429 = "cards.catalogue.rate_limited_page"
handler500 = "registry.errors.server_error_view"

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
from registry import health
from registry.login_throttle import ThrottledAdminLoginForm
from tryit.api import AgentTryView

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

urlpatterns = [
    # Probes first: they are asked most often and must not walk every route before theirs.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("", catalogue.home, name="catalogue"),
    path("favicon.ico", catalogue.favicon, name="favicon"),
    path("agents/<uuid:pk>", catalogue.agent_page, name="catalogue-agent"),
    path("api/v1/", index, name="index"),
    path("api/v1/agents/<uuid:pk>/probe", AgentProbeView.as_view(), name="agent-probe"),
    path("api/v1/agents/<uuid:pk>/try", AgentTryView.as_view(), name="agent-try"),
    path("api/v1/", include("cards.api.urls")),
    path("api/v1/", include("schemas_app.api_urls")),
    path("api/schema", SpectacularAPIView.as_view(), name="openapi-schema"),
    path("api/docs", api_docs, name="api-docs"),
    path("admin/", admin.site.urls),
    path("badges/<str:ident>.svg", badge_view, name="badge"),
    path(".well-known/jwks.json", jwks_view, name="jwks"),
    path("", include("protocols.urls")),
]

handler400 = "registry.errors.bad_request_view"
handler404 = "registry.errors.not_found_view"
handler500 = "registry.errors.server_error_view"

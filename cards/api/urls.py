from __future__ import annotations

from django.urls import path

from cards.api import browse, by_id, history, imports, parts, reads, views
from cards.attestation_views import AgentAttestationView

urlpatterns = [
    path("agents", views.AgentListCreateView.as_view(), name="agent-list"),
    path(
        "agents/<uuid:pk>",
        by_id.detail_view(views.AgentDetailView.as_view()),
        name="agent-detail",
    ),
    path("agents/<uuid:pk>/card", reads.AgentCardView.as_view(), name="agent-card"),
    path("agents/<uuid:pk>/history", history.AgentHistoryView.as_view(), name="agent-history"),
    path("agents/<uuid:pk>/skills", parts.AgentSkillsView.as_view(), name="agent-skills"),
    path(
        "agents/<uuid:pk>/interfaces",
        parts.AgentInterfacesView.as_view(),
        name="agent-interfaces",
    ),
    path(
        "agents/<uuid:pk>/live-checks",
        parts.AgentLiveChecksView.as_view(),
        name="agent-live-checks",
    ),
    path("agents/<uuid:pk>/recrawl", views.AgentRecrawlView.as_view(), name="agent-recrawl"),
    path(
        "agents/<uuid:pk>/attestation",
        AgentAttestationView.as_view(),
        name="agent-attestation",
    ),
    path("imports", imports.ImportCreateView.as_view(), name="import-create"),
    path("imports/<uuid:pk>", imports.ImportDetailView.as_view(), name="import-detail"),
    path("validate", views.ValidateView.as_view(), name="validate"),
    path("skills", browse.SkillListView.as_view(), name="skill-list"),
    path("tags", browse.TagFacetView.as_view(), name="tag-facets"),
    path("modes", browse.ModeFacetView.as_view(), name="mode-facets"),
    path("extensions", browse.ExtensionFacetView.as_view(), name="extension-facets"),
]

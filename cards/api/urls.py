from __future__ import annotations

from django.urls import path

from cards.api import imports, reads, views
from cards.attestation_views import AgentAttestationView

urlpatterns = [
    path("agents", views.AgentListCreateView.as_view(), name="agent-list"),
    path("agents/<uuid:pk>", views.AgentDetailView.as_view(), name="agent-detail"),
    path("agents/<uuid:pk>/card", reads.AgentCardView.as_view(), name="agent-card"),
    path("agents/<uuid:pk>/history", reads.AgentHistoryView.as_view(), name="agent-history"),
    path("agents/<uuid:pk>/recrawl", views.AgentRecrawlView.as_view(), name="agent-recrawl"),
    path(
        "agents/<uuid:pk>/attestation",
        AgentAttestationView.as_view(),
        name="agent-attestation",
    ),
    path("imports", imports.ImportCreateView.as_view(), name="import-create"),
    path("imports/<uuid:pk>", imports.ImportDetailView.as_view(), name="import-detail"),
    path("validate", views.ValidateView.as_view(), name="validate"),
    path("skills", reads.SkillListView.as_view(), name="skill-list"),
    path("tags", reads.TagFacetView.as_view(), name="tag-facets"),
    path("modes", reads.ModeFacetView.as_view(), name="mode-facets"),
    path("extensions", reads.ExtensionFacetView.as_view(), name="extension-facets"),
]

from __future__ import annotations

from django.urls import path

from protocols.a2a import a2a_endpoint
from protocols.ard import views as ard
from protocols.ard.index import ard_index, ard_openapi
from protocols.ard.own_manifest import ard_manifest_view
from protocols.views import agent_card_view

urlpatterns = [
    path(".well-known/agent-card.json", agent_card_view, name="own-agent-card"),
    path(".well-known/ard.json", ard_manifest_view, name="own-ard-manifest"),
    path(".well-known/ai-catalog.json", ard_manifest_view, name="own-ai-catalog"),
    path("a2a", a2a_endpoint, name="a2a"),
    path("ard/search", ard.search, name="ard-search"),
    path("ard/explore", ard.explore, name="ard-explore"),
    path("ard/agents", ard.agents, name="ard-agents"),
    path("ard/agents/<path:identifier>", ard.agent, name="ard-agent"),
    path("ard/", ard_index, name="ard-root"),
    path("ard/openapi.json", ard_openapi, name="ard-openapi"),
    path("ard/<path:rest>", ard.unknown, name="ard-unknown"),
]

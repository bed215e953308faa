from __future__ import annotations

from django.urls import path

from protocols.a2a import a2a_endpoint
from protocols.views import agent_card_view

urlpatterns = [
    path(".well-known/agent-card.json", agent_card_view, name="own-agent-card"),
    path("a2a", a2a_endpoint, name="a2a"),
]

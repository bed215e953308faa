"""The owner's first probe after submitting runs (issue 47): the probe's cooldown counts from
the last probe asked for, not from the automatic check that follows the crawl. A second probe
within the cooldown is still a 429 ``probe-too-soon``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards.models import Agent
from live import tasks
from tests.live.agents import sdk_agent
from tests.publishers.granted import grant_endpoints


@pytest.fixture
def probing(settings: Any, loopback_allowed: None) -> Any:
    settings.REGISTRY_LIVE_CHECKS = True
    settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = 60
    settings.REGISTRY_LIVE_READ_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_REQUEST_TIMEOUT = 3.0
    return settings


@pytest.mark.django_db(transaction=True)
def test_the_owners_first_probe_after_the_automatic_check_runs(probing: Any) -> None:
    owner = get_user_model().objects.create_user(username="owner")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    with sdk_agent() as agent:
        submitted = client.post("/api/v1/agents", {"url": agent.card_url}, format="json")
        assert submitted.status_code in (201, 202), submitted.content
        agent_id = submitted.json()["id"]
        row = Agent.objects.get(pk=agent_id)
        assert row.status == "ok", row.last_error
        tasks.check_agent.delay(agent_id)  # the automatic check after the crawl (the sweep's)
        first_run = Agent.objects.get(pk=agent_id).live_checked_at
        assert first_run is not None
        grant_endpoints(row)  # the owner proved the origin: probes are theirs to ask

        probe = client.post(f"/api/v1/agents/{agent_id}/probe")
        assert probe.status_code == 202, probe.content  # was a 429: "checked moments ago"
        assert Agent.objects.get(pk=agent_id).live_checked_at > first_run  # it ran (eager)

        again = client.post(f"/api/v1/agents/{agent_id}/probe")
        assert again.status_code == 429
        problem = again.json()
        assert problem["type"] == "/problems/probe-too-soon"
        assert 55 <= problem["retry_after_seconds"] <= 60, problem
        assert "less than 60 s ago" in problem["detail"]

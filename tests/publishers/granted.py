"""Proofs stated, not performed: for tests of something else that needs an owner who proved
the origins an agent's endpoints are on (opt-in, probes, Try it: issue 44 §5). The proofs
themselves (files, DNS, JWKS, over real servers) are tested in tests/publishers/test_origin*.py
and tests/publishers/test_ownership.py."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from cards.models import Agent
from live import proofs
from publishers.models import Origin
from publishers.origin_form import try_origin_of_url


def grant(account: Any, *urls: str) -> None:
    """``account`` holds a verified proof of the origin of each of ``urls``."""
    now = timezone.now()
    for url in urls:
        origin = try_origin_of_url(url)
        assert origin is not None, url
        Origin.objects.update_or_create(
            account=account,
            origin=origin,
            defaults={"state": Origin.State.VERIFIED, "method": "http", "verified_at": now},
        )


def grant_endpoints(agent: Agent) -> None:
    """The agent's owner holds proofs of every origin its endpoints are on."""
    row = Agent.objects.select_related("latest_snapshot").get(pk=agent.pk)
    assert row.submitted_by_id is not None, "an agent with no owner can never be proven"
    grant(row.submitted_by, *proofs.endpoint_urls(row))

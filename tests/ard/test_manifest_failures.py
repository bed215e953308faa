"""A failed manifest fetch never turns an agent into a hidden "ARD manifest" (issue 18, section 1).

Only a 2xx answer that reads as a manifest is one. 404/410, other 4xx, HTML or non-JSON 200 and
a refused address mean "no manifest here": discovery goes on to the card paths. A transient
failure (DNS, connect, timeout, 5xx, 429) concludes nothing about a manifest: the card paths are
read in the same crawl and the manifest is asked for again on a crawl brought forward (issue 39
item 11; tests/ard/test_manifest_recheck.py). A row that stands for a known manifest has no card
to read: its crawl raises ``TransientCrawlError`` for the task to retry, and the last try records
the failure on the manifest. Real servers on loopback, submissions by a real account.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from cards.crawling import agent_crawl
from cards.crawling.manifests import MANIFEST_REASON
from cards.models import Agent, CrawlAttempt, Manifest
from cards.services import TransientCrawlError, agent_submit
from cards.tasks import crawl_agent
from tests.ard.conftest import card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db(transaction=False)

ARD = "/.well-known/ard.json"
CARD = "/.well-known/agent-card.json"


def _card(name: str) -> bytes:
    return card(name, f"{name} helps", [{"id": "help", "name": "Help", "description": "d"}])


def _origin(server: CardServer, user: Any) -> Agent:
    agent, _ = agent_submit(url=server.origin, user=user, enqueue=False)
    return agent


def _is_plain_agent(agent: Agent, name: str) -> None:
    """Listed with its card: not a manifest's stand-in, not hidden."""
    agent.refresh_from_db()
    assert agent.status == "ok", agent.last_error
    assert agent.name == name and agent.shape != "ard-manifest" and agent.manifest_id is None
    assert agent.moderation == Agent.Moderation.APPROVED and not agent.moderation_reason
    assert not Manifest.objects.exists()


def _listed(agent: Agent) -> bool:
    rows = APIClient().get("/api/v1/agents", {"limit": 100}).json()["results"]
    return str(agent.pk) in {row["id"] for row in rows}


NO_MANIFEST = {
    "403": Reply(status=403, body=b"forbidden", headers={"Content-Type": "text/plain"}),
    "401": Reply(status=401, body=b"", headers={"WWW-Authenticate": "Bearer"}),
    "410": Reply(status=410, body=b""),
    "html-200": Reply(body=b"<html>Welcome</html>", headers={"Content-Type": "text/html"}),
    "non-json-200": Reply(body=b"hello, world", headers={"Content-Type": "application/json"}),
    "card-at-ard-json": Reply(body=_card("Elsewhere")),
    "refused-redirect": Reply(status=302, headers={"Location": "http://10.0.0.7/ard.json"}),
}  # fmt: skip


@pytest.mark.parametrize("case", NO_MANIFEST)
def test_no_manifest_here_goes_on_to_the_card(
    case: str, card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    card_server.routes[ARD] = NO_MANIFEST[case]
    card_server.serve(CARD, _card("Plain"))
    agent = _origin(card_server, user)
    assert agent_crawl(agent_id=agent.pk) == "stored"
    _is_plain_agent(agent, "Plain")
    assert card_server.hits(ARD) == 1 and card_server.hits(CARD) == 1
    assert _listed(agent)


def _slow(handler: Any) -> Reply:
    time.sleep(1.5)
    return Reply(body=b'{"entries": []}')


TRANSIENT: dict[str, Reply | Callable[[Any], Reply]] = {
    "500": Reply(status=500, body=b"oops"),
    "503": Reply(status=503, body=b"", headers={"Retry-After": "30"}),
    "429": Reply(status=429, body=b"", headers={"Retry-After": "30"}),
    "timeout": _slow,
}


@pytest.mark.parametrize("case", TRANSIENT)
def test_a_transient_failure_at_ard_json_does_not_keep_the_card_from_being_read(
    case: str, card_server: CardServer, loopback_allowed: None, user: Any, settings: Any
) -> None:
    """Issue 39 item 11: the card paths are read in the same crawl, so the agent has its name
    at once; the next crawl, which asks for the manifest again, is brought forward."""
    settings.REGISTRY_FETCH_READ_TIMEOUT = 0.5
    card_server.routes[ARD] = TRANSIENT[case]
    card_server.serve(CARD, _card("Plain"))
    agent = _origin(card_server, user)
    before = timezone.now()
    assert agent_crawl(agent_id=agent.pk) == "stored"
    _is_plain_agent(agent, "Plain")
    assert card_server.hits(ARD) == 1 and card_server.hits(CARD) == 1
    assert agent.next_crawl_at is not None
    soon = settings.REGISTRY_CRAWL_MIN_INTERVAL_SECONDS + 5
    assert agent.next_crawl_at <= before + timedelta(seconds=soon), agent.next_crawl_at
    assert CrawlAttempt.objects.filter(agent=agent, outcome="stored").count() == 1
    assert _listed(agent)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_nothing_listening_is_transient_and_never_a_hidden_manifest(
    loopback_allowed: None, user: Any
) -> None:
    agent, _ = agent_submit(url=f"http://127.0.0.1:{_closed_port()}", user=user, enqueue=False)
    with pytest.raises(TransientCrawlError):  # at ard.json, then at the card paths
        agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "error" and agent.last_error_code == "connect-failed"
    assert not Manifest.objects.exists()
    assert crawl_agent.apply(args=[str(agent.pk)]).get() == "error"
    agent.refresh_from_db()
    assert agent.status == "error" and agent.last_error_code == "connect-failed"
    assert agent.shape != "ard-manifest" and agent.moderation == Agent.Moderation.APPROVED
    assert not Manifest.objects.exists()


def test_the_readme_example_that_does_not_resolve_is_not_a_hidden_manifest(
    client_auth: APIClient,
) -> None:
    response = client_auth.post(
        "/api/v1/agents", {"url": "https://agent.example.com"}, format="json"
    )
    assert response.status_code in (201, 202), response.content
    agent = Agent.objects.get(pk=response.json()["id"])
    with pytest.raises(TransientCrawlError):  # at ard.json, then at the card paths
        agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "error" and agent.description == ""
    assert crawl_agent.apply(args=[str(agent.pk)]).get() == "error"
    agent.refresh_from_db()
    assert agent.status == "error" and agent.last_error_code == "dns-failure", agent.last_error
    assert agent.shape != "ard-manifest" and "ARD manifest" not in agent.description
    assert agent.moderation == Agent.Moderation.APPROVED and not agent.moderation_reason
    assert not Manifest.objects.exists()
    detail = client_auth.get(f"/api/v1/agents/{agent.pk}").json()
    assert "ARD manifest" not in json.dumps(detail)


@pytest.mark.parametrize("status", [403, 500])
def test_a_good_agent_whose_ard_json_starts_failing_stays_listed_with_its_card(
    status: int, card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    card_server.serve(CARD, _card("Steady"))
    agent = _origin(card_server, user)
    assert agent_crawl(agent_id=agent.pk) == "stored"
    _is_plain_agent(agent, "Steady")
    card_server.serve(ARD, b"no", status=status, content_type="text/plain")
    # A 500 says nothing about a manifest, a 403 says there is none: the card is read either way.
    assert agent_crawl(agent_id=agent.pk) == "unchanged"
    _is_plain_agent(agent, "Steady")
    assert _listed(agent)
    assert card_server.hits(CARD) == 2


def _publish(server: CardServer) -> None:
    server.serve("/cards/alpha.json", _card("Alpha"))
    entry = {
        "identifier": "urn:air:127.0.0.1:a2a:alpha",
        "displayName": "Alpha",
        "type": "application/a2a-agent-card+json",
        "url": server.url("/cards/alpha.json"),
    }
    server.serve(ARD, json.dumps({"specVersion": "1.0", "entries": [entry]}).encode())


@pytest.mark.parametrize("status", [403, 500])
def test_a_known_manifest_that_fails_is_recorded_on_it_and_nothing_else_changes(
    status: int, card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    _publish(card_server)
    origin = _origin(card_server, user)
    assert agent_crawl(agent_id=origin.pk) == "manifest"
    card_server.serve(ARD, b"no", status=status, content_type="text/plain")
    if status >= 500:
        with pytest.raises(TransientCrawlError):
            agent_crawl(agent_id=origin.pk)
        assert Manifest.objects.get().status == "ok"
        assert crawl_agent.apply(args=[str(origin.pk)]).get() == "error"
    else:
        assert agent_crawl(agent_id=origin.pk) == "error"
    manifest = Manifest.objects.get()
    assert manifest.status == "error" and str(status) in manifest.last_error
    origin.refresh_from_db()
    assert origin.manifest_id == manifest.pk and origin.moderation == Agent.Moderation.HIDDEN
    alpha = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha")
    assert alpha.manifest_listed is True and alpha.status == "ok"
    assert card_server.hits(CARD) == 0


def test_a_withdrawn_manifest_404_gives_the_origin_its_card_back(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    _publish(card_server)
    origin = _origin(card_server, user)
    agent_crawl(agent_id=origin.pk)
    del card_server.routes[ARD]
    card_server.serve(CARD, _card("Origin itself"))
    assert agent_crawl(agent_id=origin.pk) == "stored"
    origin.refresh_from_db()
    assert origin.manifest_id is None and origin.shape != "ard-manifest"
    assert origin.name == "Origin itself" and origin.moderation == Agent.Moderation.APPROVED


def test_an_origin_hidden_by_the_old_failure_comes_back(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    """Rows the old code made: a hidden "manifest" that was never read. The next crawl finds
    no manifest (403) and gives the origin its card and its place in the catalogue."""
    card_server.serve(ARD, b"", status=403)
    card_server.serve(CARD, _card("Recovered"))
    origin = _origin(card_server, user)
    manifest = Manifest.objects.create(
        url=card_server.url(ARD), origin=card_server.origin, status="error",
        last_error="the server answered 403 Forbidden", found_via="well-known-ard",
    )  # fmt: skip
    Agent.objects.filter(pk=origin.pk).update(
        manifest=manifest, shape="ard-manifest", status="error",
        moderation=Agent.Moderation.HIDDEN, moderation_reason=MANIFEST_REASON + manifest.url,
        description=f"ARD manifest at {manifest.url}: 0 A2A agents, 0 entries in all.",
    )  # fmt: skip
    assert agent_crawl(agent_id=origin.pk) == "stored"
    origin.refresh_from_db()
    assert origin.status == "ok" and origin.name == "Recovered" and origin.manifest_id is None
    assert origin.moderation == Agent.Moderation.APPROVED and origin.shape != "ard-manifest"
    assert "ARD manifest" not in origin.description
    assert _listed(origin)


def test_a_linked_manifest_is_not_withdrawn_when_the_home_page_fails_for_a_moment(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    """The known manifest is found through ``<link rel="ard">``: a 503 on the home page says
    nothing about it, so the crawl changes nothing and is retried."""
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    entry = {
        "identifier": "urn:air:127.0.0.1:a2a:alpha",
        "displayName": "Alpha",
        "type": "application/a2a-agent-card+json",
        "url": card_server.url("/cards/alpha.json"),
    }
    card_server.serve("/catalog.json", json.dumps({"entries": [entry]}).encode())
    card_server.serve("/", b'<link rel="ard" href="/catalog.json">', content_type="text/html")
    origin = _origin(card_server, user)
    assert agent_crawl(agent_id=origin.pk) == "manifest"
    card_server.serve("/", b"busy", status=503, content_type="text/plain")
    with pytest.raises(TransientCrawlError):
        agent_crawl(agent_id=origin.pk)
    origin.refresh_from_db()
    assert origin.manifest_id is not None and origin.shape == "ard-manifest"
    assert origin.moderation == Agent.Moderation.HIDDEN
    assert Manifest.objects.get().status == "ok"


def test_a_tls_error_is_no_manifest_and_ends_as_the_cards_error(
    card_server: CardServer, loopback_allowed: None, user: Any
) -> None:
    """HTTPS to a server that speaks plain HTTP: the handshake fails at ard.json (no manifest
    here) and again at the card paths, which is the agent's recorded error."""
    agent, _ = agent_submit(url=f"https://127.0.0.1:{card_server.port}", user=user, enqueue=False)
    assert agent_crawl(agent_id=agent.pk) == "error"
    agent.refresh_from_db()
    assert agent.status == "error" and agent.last_error_code == "tls-error", agent.last_error
    assert agent.shape != "ard-manifest" and agent.moderation == Agent.Moderation.APPROVED
    assert not Manifest.objects.exists()

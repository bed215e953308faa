"""Manifest ingestion through real HTTP servers on loopback (docs/ard.md, "Manifests")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cards.crawling import agent_crawl
from cards.models import Agent, AgentEvent, Manifest
from cards.services import agent_submit
from tests.ard.conftest import card

pytestmark = pytest.mark.django_db(transaction=False)


def submit(url: str, user: Any) -> tuple[Agent, bool]:
    """Submit with a real account and crawl at once (the queue's on-commit hook does not run
    inside a test transaction)."""
    agent, created = agent_submit(url=url, user=user, enqueue=False)
    agent_crawl(agent_id=agent.pk)
    return agent, created


def _card(name: str) -> bytes:
    return card(
        name,
        f"{name} does things",
        [{"id": name.lower(), "name": name, "description": "d", "tags": ["demo"]}],
    )


def _entry(server: Any, name: str, *, publisher: str = "127.0.0.1", **extra: Any) -> dict[str, Any]:
    out = {
        "identifier": f"urn:air:{publisher}:a2a:{name.lower()}",
        "displayName": name,
        "type": "application/a2a-agent-card+json",
        "representativeQueries": [f"ask {name} something", f"help from {name}"],
        "tags": ["from-manifest"],
        **extra,
    }
    if "data" not in extra and "url" not in extra:
        out["url"] = server.url(f"/cards/{name.lower()}.json")
    return out


def _manifest(
    server: Any, entries: list[dict[str, Any]], path: str = "/.well-known/ard.json"
) -> None:
    server.serve(
        path,
        json.dumps(
            {"specVersion": "1.0", "host": {"displayName": "Loop"}, "entries": entries}
        ).encode(),
    )


def test_origin_with_manifest(card_server: Any, loopback_allowed: None, user: Any) -> None:
    for name in ("Alpha", "Gamma"):
        card_server.serve(f"/cards/{name.lower()}.json", _card(name))
    entries = [
        _entry(card_server, "Alpha", capabilities=["Summarise"]),
        _entry(card_server, "Beta", data=json.loads(_card("Beta"))),
        _entry(card_server, "Gamma", publisher="google.com"),
        {
            "identifier": "urn:air:127.0.0.1:mcp:w",
            "displayName": "W",
            "type": "application/mcp-server-card+json",
            "url": "https://x.example/w",
        },
        _entry(card_server, "Private", url="http://10.1.2.3/card.json"),
    ]
    _manifest(card_server, entries)
    origin, _ = submit(card_server.origin, user)
    origin.refresh_from_db()
    manifest = Manifest.objects.get()
    assert manifest.status == "ok" and manifest.found_via == "well-known-ard"
    assert origin.manifest_id == manifest.pk and origin.moderation == Agent.Moderation.HIDDEN
    assert manifest.type_counts == {
        "application/a2a-agent-card+json": 4,
        "application/mcp-server-card+json": 1,
    }
    assert manifest.other_entries[0]["identifier"] == "urn:air:127.0.0.1:mcp:w"
    codes = {f["code"] for f in manifest.findings}
    assert {"ard.publisher-authority", "ard.entry-url"} <= codes
    alpha = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha")
    assert alpha.status == "ok" and alpha.ard_identifier_source == "manifest"
    # The entries belong to the account that submitted the origin (issue 17 item 4).
    assert alpha.submitted_by_id == user.pk and origin.submitted_by_id == user.pk
    assert "summarise" in [c.lower() for c in alpha.capabilities] and "from-manifest" in alpha.tags
    beta = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:beta")
    assert beta.status == "ok" and beta.ard_entry["inline"] is True and beta.name == "Beta"
    assert beta.submitted_by_id == user.pk
    # An inline card is re-read with its manifest, never fetched on its own (its URL is the
    # manifest's with a fragment: fetching it would read the manifest as the card).
    assert beta.next_crawl_at is None
    assert agent_crawl(agent_id=beta.pk) == "inline"
    beta.refresh_from_db()
    assert beta.name == "Beta" and beta.status == "ok"
    gamma = Agent.objects.get(url=card_server.url("/cards/gamma.json"))
    assert (
        gamma.ard_identifier == "urn:air:127.0.0.1:a2a:gamma"
        and gamma.ard_identifier_source == "derived"
    )
    assert not Agent.objects.filter(url__contains="10.1.2.3").exists()
    assert "from-manifest" in alpha.search_text and "ask Alpha something" in alpha.search_text


def test_entry_that_disappears_is_marked_and_recorded(
    card_server: Any, loopback_allowed: None, client_anon: Any, user: Any
) -> None:
    for name in ("Alpha", "Gamma"):
        card_server.serve(f"/cards/{name.lower()}.json", _card(name))
    _manifest(card_server, [_entry(card_server, "Alpha"), _entry(card_server, "Gamma")])
    origin, _ = submit(card_server.origin, user)
    _manifest(card_server, [_entry(card_server, "Gamma")])
    agent_crawl(agent_id=origin.pk)
    alpha = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha")
    assert alpha.manifest_listed is False
    assert AgentEvent.objects.filter(agent=alpha, kind="manifest-entry-removed").exists()
    detail = client_anon.get(f"/api/v1/agents/{alpha.pk}").json()
    assert detail["ard"]["listed"] is False
    history = client_anon.get(f"/api/v1/agents/{alpha.pk}/history").json()
    assert "manifest-entry-removed" in json.dumps(history)
    # Back in the manifest: listed again, and that is recorded too.
    _manifest(card_server, [_entry(card_server, "Alpha"), _entry(card_server, "Gamma")])
    agent_crawl(agent_id=origin.pk)
    alpha.refresh_from_db()
    assert alpha.manifest_listed is True
    assert AgentEvent.objects.filter(agent=alpha, kind="manifest-entry-restored").exists()


def test_rel_ard_link_then_ai_catalog_fallback(
    card_server: Any, loopback_allowed: None, user: Any
) -> None:
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    card_server.serve(
        "/",
        b'<html><head><link rel="ard" href="/catalog/entries.json"></head></html>',
        content_type="text/html",
    )
    _manifest(card_server, [_entry(card_server, "Alpha")], path="/catalog/entries.json")
    submit(card_server.origin, user)
    assert Manifest.objects.get().found_via == "link-ard"


def test_ai_catalog_is_the_fallback(card_server: Any, loopback_allowed: None, user: Any) -> None:
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    _manifest(card_server, [_entry(card_server, "Alpha")], path="/.well-known/ai-catalog.json")
    submit(card_server.origin, user)
    assert Manifest.objects.get().found_via == "well-known-ai-catalog"
    assert Agent.objects.filter(ard_identifier="urn:air:127.0.0.1:a2a:alpha", status="ok").exists()


def test_origin_without_manifest_uses_the_card_paths(
    card_server: Any, loopback_allowed: None, user: Any
) -> None:
    card_server.serve("/.well-known/agent-card.json", _card("Plain"))
    agent, _ = submit(card_server.origin, user)
    agent.refresh_from_db()
    assert agent.status == "ok" and agent.manifest_id is None and agent.name == "Plain"
    assert agent.ard_identifier == "urn:air:127.0.0.1:a2a:plain"


def test_a_huge_or_broken_manifest_loses_nothing(
    card_server: Any, loopback_allowed: None, settings: Any, user: Any
) -> None:
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    _manifest(card_server, [_entry(card_server, "Alpha")])
    origin, _ = submit(card_server.origin, user)
    settings.REGISTRY_FETCH_MAX_BYTES = 4096
    card_server.serve("/.well-known/ard.json", b'{"entries": [' + b'{"x": 1},' * 5000 + b"{}]}")
    agent_crawl(agent_id=origin.pk)
    manifest = Manifest.objects.get()
    assert manifest.status == "error" and manifest.findings[0]["code"] == "ard.fetch"
    alpha = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha")
    assert alpha.manifest_listed is True and alpha.status == "ok"
    settings.REGISTRY_FETCH_MAX_BYTES = 1024 * 1024
    card_server.serve("/.well-known/ard.json", b'{"entries": [' + b"[" * 3000)
    agent_crawl(agent_id=origin.pk)
    manifest.refresh_from_db()
    assert manifest.status == "error"
    assert Agent.objects.get(pk=alpha.pk).manifest_listed is True


def test_a_known_manifest_redirecting_to_a_private_address_is_a_recorded_failure(
    card_server: Any, loopback_allowed: None, user: Any
) -> None:
    card_server.serve("/cards/alpha.json", _card("Alpha"))
    _manifest(card_server, [_entry(card_server, "Alpha")])
    origin, _ = submit(card_server.origin, user)
    card_server.serve(
        "/.well-known/ard.json", b"", status=302, headers={"Location": "http://10.0.0.7/ard.json"}
    )
    assert agent_crawl(agent_id=origin.pk) == "error"
    manifest = Manifest.objects.get()
    assert manifest.status == "error" and manifest.findings[0]["code"] == "ard.fetch"
    assert "10.0.0.7" in manifest.last_error
    origin.refresh_from_db()
    assert origin.status == "error" and origin.manifest_id == manifest.pk
    assert origin.moderation == Agent.Moderation.HIDDEN
    alpha = Agent.objects.get(ard_identifier="urn:air:127.0.0.1:a2a:alpha")
    assert alpha.manifest_listed is True and alpha.status == "ok"

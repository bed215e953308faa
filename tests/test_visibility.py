"""The one visibility gate, checked on every GET route the URLconf has.

Canary agents in each non-public state carry unique names, tags, modes, schema names and
extension URIs. No response to an anonymous reader or to another account may contain any of
those strings; the owner and staff see what docs/api.md ("Visibility") says they see. Routes
are enumerated from the URLconf, so a new endpoint is covered without anyone remembering.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cards import moderation
from cards.models import Agent
from cards.rendering.store import agent_changed
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

STATES = ("pending", "hidden", "rejected", "deleted")
# Routes that are not public reads: the admin (staff login) and the docs UI's static shell.
SKIPPED_PREFIXES = ("admin/",)


def canary_card(state: str) -> dict[str, Any]:
    word = f"Canary{state.title()}Zq"
    return minimal_card(
        name=f"{word} agent",
        description=f"{word} description",
        defaultInputModes=[f"application/json;schema={word}In"],
        defaultOutputModes=["text/plain"],
        capabilities={
            "streaming": False,
            "extensions": [{"uri": f"https://canary.example/{word}/ext", "required": False}],
        },
        skills=[
            {
                "id": f"{word.lower()}-skill",
                "name": f"{word} skill",
                "description": "A canary.",
                "tags": [f"{word.lower()}-tag"],
                "outputModes": [f"application/json;schema={word}Out"],
            }
        ],
        schemas={
            f"{word}In": {"type": "object", "properties": {"q": {"type": "string"}}},
            f"{word}Out": {"type": "object"},
        },
    )


def secrets(state: str) -> list[str]:
    word = f"Canary{state.title()}Zq"
    return [word, word.lower()]


@pytest.fixture
def world() -> dict[str, Any]:
    users = get_user_model().objects
    owner = users.create_user(username="owner")
    stranger = users.create_user(username="stranger")
    staff = users.create_user(username="curator", is_staff=True)
    public = agent_from_card(
        minimal_card(
            name="Public helper",
            defaultInputModes=["application/json;schema=PublicThing"],
            capabilities={"extensions": [{"uri": "https://public.example/ext"}]},
        )
    )
    canaries: dict[str, Agent] = {}
    for state in STATES:
        agent = agent_from_card(canary_card(state), url=f"https://{state}.canary.example/card")
        Agent.objects.filter(pk=agent.pk).update(submitted_by=owner)
        agent.refresh_from_db()
        if state == "deleted":
            moderation.agent_delete(agent=agent, actor=owner)
        else:
            moderation.agent_moderate(agent=agent, state=state, actor=staff, reason="canary")
        agent_changed(agent.pk)
        canaries[state] = agent
    cache.clear()
    return {
        "owner": owner,
        "stranger": stranger,
        "staff": staff,
        "public": public,
        "canaries": canaries,
    }


def client_for(user: Any) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def get_routes() -> list[str]:
    """Every route template of the URLconf that answers GET, except the skipped ones."""
    routes = []
    for route, _entry in _walk(get_resolver().url_patterns):
        if route.startswith(SKIPPED_PREFIXES) or route.startswith("^"):
            continue
        routes.append(route)
    return sorted(set(routes))


PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def fill(route: str, values: dict[str, str]) -> str:
    """A concrete path for a route template, taking each parameter's value from ``values``."""

    def value(match: re.Match[str]) -> str:
        return values.get(match.group(2), values.get("*", "x"))

    return "/" + PARAM.sub(value, route)


def paths_for(route: str, agent: Agent, word: str) -> list[str]:
    """The paths that would show ``agent`` through ``route``: by id, by its schema names, its
    extension URI and its schema hashes, plus the route's own list and search forms."""
    values = {
        "pk": str(agent.pk),
        "ident": str(agent.pk),
        "identifier": str(agent.ard_identifier),
        "uri": f"https://canary.example/{word}/ext",
    }
    paths = []
    if "<" not in route:
        base = fill(route, values)
        paths += [
            base,
            base + f"?q={word}",
            base + f"?tag={word.lower()}-tag",
            base + f"?schema={word}In",
            base + f"?input_mode=application/json;schema={word}In",
            base + f"?prefix={word[:6]}",
            base + f"?prefix={word.lower()[:6]}",
            base + "?health=gone",
        ]
    elif "name" in route:
        paths += [
            fill(route, {**values, "name": f"{word}In"}),
            fill(route, {**values, "name": f"{word}Out"}),
        ]
    elif "hex" in route:
        for schema in canary_card_schemas(word):
            paths.append(fill(route, {**values, "hex": schema}))
    else:
        paths.append(fill(route, values))
    return paths


def canary_card_schemas(word: str) -> list[str]:
    """The sha256 of each canary schema's RFC 8785 form (the registry's content hash)."""
    import rfc8785

    card = canary_card(word.removeprefix("Canary").removesuffix("Zq").lower())
    return [
        hashlib.sha256(rfc8785.dumps(schema)).hexdigest() for schema in card["schemas"].values()
    ]


def leaked(body: bytes, state: str, path: str) -> list[str]:
    text = body.decode("utf-8", "replace")
    # JSON escapes may hide a string: look at the decoded document too.
    try:
        text += json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        pass
    # What the request itself said may be echoed back (a search form, a next link, an error
    # naming the value): that is not a leak, so it is taken out before looking.
    parts = urlsplit(path)
    tails = [parts.path[i + 1 :] for i, ch in enumerate(parts.path) if ch == "/"]
    echoes = [*tails, *(v for values in parse_qs(parts.query).values() for v in values)]
    for echo in sorted(echoes, key=len, reverse=True):
        for form in (echo, quote(echo, safe=""), quote(echo), html.escape(echo)):
            text = text.replace(form, "")
    return [secret for secret in secrets(state) if secret in text]


def test_every_get_route_is_enumerated() -> None:
    routes = get_routes()
    # A sample of what must be there; the rest is whatever the URLconf grows.
    for expected in ("api/v1/agents", "api/v1/tags", "api/v1/schemas", "badges/<str:ident>.svg"):
        assert expected in routes


@pytest.mark.parametrize("reader", ["anonymous", "stranger"])
def test_no_get_route_shows_a_non_public_agent(world: dict[str, Any], reader: str) -> None:
    client = client_for(None if reader == "anonymous" else world["stranger"])
    failures = []
    for route in get_routes():
        for state, agent in world["canaries"].items():
            word = f"Canary{state.title()}Zq"
            for path in paths_for(route, agent, word):
                response = client.get(path)
                assert response.status_code < 500, (path, response.status_code)
                body = (
                    b"".join(response)
                    if getattr(response, "streaming", False)
                    else response.content
                )
                found = leaked(body, state, path)
                if found:
                    failures.append((path, state, response.status_code, found))
    assert failures == []


def test_the_owner_sees_their_agents_in_any_state_but_deleted(world: dict[str, Any]) -> None:
    client = client_for(world["owner"])
    for state, agent in world["canaries"].items():
        detail = client.get(f"/api/v1/agents/{agent.pk}")
        listed = client.get("/api/v1/agents", {"q": f"Canary{state.title()}Zq"})
        if state == "deleted":
            assert detail.status_code == 404
            assert listed.json()["results"] == []
        else:
            assert detail.status_code == 200
            body = detail.json()
            assert body["owned"] is True
            assert body["moderation"] == {"state": state, "reason": "canary"}
            assert [r["id"] for r in listed.json()["results"]] == [str(agent.pk)]


def test_staff_see_every_agent_that_is_not_deleted(world: dict[str, Any]) -> None:
    client = client_for(world["staff"])
    for state, agent in world["canaries"].items():
        detail = client.get(f"/api/v1/agents/{agent.pk}")
        assert detail.status_code == (404 if state == "deleted" else 200)
    assert client.get(f"/api/v1/agents/{world['public'].pk}").json()["owned"] is True


def test_a_stranger_sees_the_public_agent_without_moderation_reasons(world: dict[str, Any]) -> None:
    body = client_for(world["stranger"]).get(f"/api/v1/agents/{world['public'].pk}").json()
    assert body["owned"] is False
    assert body["moderation"]["reason"] is None


def test_facets_count_public_agents_only(world: dict[str, Any]) -> None:
    client = client_for(None)
    tags = {row["tag"] for row in client.get("/api/v1/tags", {"limit": 100}).json()["results"]}
    assert "echo" in tags
    assert not any("canary" in tag for tag in tags)
    # Approving a canary brings its tag in; hiding it again takes it out.
    hidden = world["canaries"]["hidden"]
    moderation.agent_moderate(agent=hidden, state="approved", actor=world["staff"])
    tags = {row["tag"] for row in client.get("/api/v1/tags", {"limit": 100}).json()["results"]}
    assert "canaryhiddenzq-tag" in tags
    moderation.agent_moderate(agent=hidden, state="hidden", actor=world["staff"], reason="again")
    tags = {row["tag"] for row in client.get("/api/v1/tags", {"limit": 100}).json()["results"]}
    assert "canaryhiddenzq-tag" not in tags

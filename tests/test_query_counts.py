"""Every GET endpoint costs a pinned number of queries, the same whatever the page size.

Routes come from the URLconf (as in tests/test_visibility.py), so a new GET endpoint fails here
until its count is pinned below. Counted for an anonymous reader and for a token holder (the
token lookup is one more query).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import rfc8785
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.factories import agent_from_card, minimal_card
from tests.test_visibility import fill, get_routes

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
EXTENSION = "https://counts.example/ext"

# route -> queries for an anonymous GET. Catalogue pages read the facet cache first (a cache
# miss counts the facet queries); badges and the card are one row.
PINNED: dict[str, int] = {
    "": 6,  # catalogue home on a facet-cache miss: 4 facets, the page, the featured row
    ".well-known/jwks.json": 2,
    # Not in the page cache (a hit is 1, the row's version): that version, the agent with one
    # page each of its interfaces and live checks, its default modes, extensions, first skills
    # with their count, its schema uses and named modes (whatever the card holds)
    "agents/<uuid:pk>": 7,
    "agents/<uuid:pk>/try": 1,  # no skill asked for: the agent, then a 404 page
    "agents/<path:rest>": 0,  # not an id: the catalogue's 404 page
    "my-agents": 0,  # anonymous: how to sign in, no agent read
    "robots.txt": 0,
    "api/docs": 0,
    "api/docs/ard": 0,
    "api/schema": 0,
    "api/v1/": 0,
    "api/v1/agents": 1,
    "api/v1/agents/<uuid:pk>": 1,
    "api/v1/agents/<uuid:pk>/attestation": 2,
    "api/v1/agents/<uuid:pk>/card": 1,
    "api/v1/agents/<uuid:pk>/check-message": 0,  # POST only: GET is a 405
    "api/v1/agents/<uuid:pk>/history": 4,
    "api/v1/agents/<uuid:pk>/skills": 2,  # the gate, one page of skills
    "api/v1/agents/<uuid:pk>/interfaces": 1,  # the gated row with its slice (PostgreSQL)
    "api/v1/agents/<uuid:pk>/live-checks": 1,
    "api/v1/agents/<uuid:pk>/probe": 0,
    "api/v1/agents/<uuid:pk>/recrawl": 0,
    "api/v1/agents/<uuid:pk>/schema-changes": 2,
    "api/v1/agents/<uuid:pk>/schemas": 2,
    "api/v1/agents/<uuid:pk>/try": 0,  # POST only: GET is a 405
    "api/v1/agents/<uuid:pk>/validate-payload": 0,
    "api/v1/extensions": 1,
    "api/v1/extensions/<anytext:uri>": 4,
    "api/v1/imports": 0,
    "api/v1/imports/<uuid:pk>": 0,  # anonymous: the 404 of an unknown id, before any query
    "api/v1/modes": 1,
    "api/v1/schemas": 4,
    "api/v1/schemas/<anytext:name>": 6,
    "api/v1/schemas/<anytext:name>/agents": 3,
    "api/v1/schemas/match": 0,  # POST only: GET is a 405
    "api/v1/schemas/sha256/<str:hex>": 3,
    "api/v1/skills": 1,
    "api/v1/tags": 1,
    "api/v1/validate": 0,
    "badges/<str:ident>.svg": 1,
    "favicon.ico": 0,
    "healthz": 0,
    # The scrape-time gauges (the crawl lag, registry_dependency_up) read on connections of their
    # own threads (registry/metrics_exposition.py), which the request does not count.
    "metrics": 0,
    ".well-known/agent-card.json": 1,  # the registry's own card: its signing key
    "a2a": 0,  # JSON-RPC over POST: GET is a 405
    "readyz": 1,
    ".well-known/ard.json": 0,
    ".well-known/ai-catalog.json": 0,
    "ard/": 0,
    "ard/<path:rest>": 0,
    "ard/openapi.json": 0,
    "ard/search": 0,  # POST only: GET is a 405
    "ard/explore": 0,  # POST only: GET is a 405
    "ard/agents": 1,
    "ard/agents/<path:identifier>": 1,
    # Publisher accounts (allauth's pages, issue 44), for an anonymous reader: a form read from
    # nothing, a redirect to the sign-in or a 404. Sign-in and sign-up read the configured
    # providers (their "Sign in with" buttons); an unconfigured provider's door looks for its app.
    "accounts/2fa/": 0,
    "accounts/2fa/authenticate/": 0,
    "accounts/2fa/reauthenticate/": 0,
    "accounts/2fa/recovery-codes/": 0,
    "accounts/2fa/recovery-codes/download/": 0,
    "accounts/2fa/recovery-codes/generate/": 0,
    "accounts/2fa/totp/activate/": 0,
    "accounts/2fa/totp/deactivate/": 0,
    "accounts/2fa/webauthn/": 0,
    "accounts/2fa/webauthn/add/": 0,
    "accounts/2fa/webauthn/keys/<int:pk>/edit/": 0,
    "accounts/2fa/webauthn/keys/<int:pk>/remove/": 0,
    "accounts/2fa/webauthn/login/": 0,
    "accounts/2fa/webauthn/reauthenticate/": 0,
    "accounts/3rdparty/": 0,
    "accounts/3rdparty/login/cancelled/": 0,
    "accounts/3rdparty/login/error/": 0,
    "accounts/3rdparty/signup/": 0,
    "accounts/^confirm-email/(?P<key>[-:\\w]+)/$": 0,
    "accounts/^password/reset/key/(?P<uidb36>[0-9A-Za-z]+)-(?P<key>.+)/$": 0,
    "accounts/confirm-email/": 0,
    "accounts/email/": 0,
    "accounts/github/login/": 1,
    "accounts/github/login/callback/": 1,
    "accounts/inactive/": 0,
    "accounts/login/": 1,
    "accounts/login/code/confirm/": 0,
    "accounts/logout/": 0,
    "accounts/oidc/^(?P<provider_id>[^/]+)/login/": 0,
    "accounts/oidc/^(?P<provider_id>[^/]+)/login/callback/": 0,
    "accounts/password/change/": 0,
    "accounts/password/reset/": 0,
    "accounts/password/reset/done/": 0,
    "accounts/password/reset/key/done/": 0,
    "accounts/password/set/": 0,
    "accounts/reauthenticate/": 0,
    "accounts/reauthenticate/code/": 0,
    "accounts/reauthenticate/code/confirm/": 0,
    "accounts/signup/": 1,
    "accounts/social/connections/": 0,
    "accounts/social/login/cancelled/": 0,
    "accounts/social/login/error/": 0,
    "accounts/social/signup/": 0,
    # An account's own tokens and origins (issue 44): anonymous, a sign-in redirect or a 401.
    "account/origins": 0,
    "account/origins/<int:origin_id>/remove": 0,
    "account/origins/<int:origin_id>/verify": 0,
    "account/tokens": 0,
    "account/tokens/<int:token_id>/revoke": 0,
    "api/v1/origins": 0,
    "api/v1/origins/<int:origin_id>": 0,
    "api/v1/origins/<int:origin_id>/verify": 0,
    # Trusted publishing (issue 45): an origin's trusted publishers, and the exchange.
    "api/v1/origins/<int:origin_id>/trusted-publishers": 0,
    "api/v1/origins/<int:origin_id>/trusted-publishers/<int:publisher_id>": 0,
    "api/v1/trusted-publishing/exchange": 0,
    "api/v1/tokens": 0,
    "api/v1/tokens/<int:token_id>": 0,
}


def build(count: int) -> list[Any]:
    return [
        agent_from_card(
            minimal_card(
                name=f"Counted {index}",
                defaultInputModes=["application/json;schema=Counted"],
                capabilities={"extensions": [{"uri": EXTENSION}]},
                skills=[
                    {
                        "id": f"s{index}",
                        "name": f"Skill {index}",
                        "description": "Counted.",
                        "tags": ["counted", f"tag{index}"],
                    }
                ],
                schemas={"Counted": SCHEMA},
            )
        )
        for index in range(count)
    ]


def path_for(route: str, agent: Any) -> str:
    return fill(
        route,
        {
            "pk": str(agent.pk),
            "ident": str(agent.pk),
            "identifier": str(agent.ard_identifier),
            "uri": EXTENSION,
            "name": "Counted",
            "hex": hashlib.sha256(rfc8785.dumps(SCHEMA)).hexdigest(),
        },
    )


def counts(client: APIClient, agent: Any) -> dict[str, int]:
    out = {}
    for route in get_routes():
        if route not in PINNED:
            out[route] = -1
            continue
        cache.clear()
        client.get(path_for(route, agent))  # warm: signing keys, content types, caches
        cache.clear()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path_for(route, agent))
        assert response.status_code < 500, route
        out[route] = len(queries)
    return out


def test_every_get_route_has_a_pinned_count() -> None:
    missing = [route for route in get_routes() if route not in PINNED]
    assert missing == [], "pin the query count of these new routes in PINNED"


def test_query_counts_are_pinned_and_do_not_grow_with_the_page() -> None:
    agents = build(2)
    client = APIClient()
    few = counts(client, agents[0])
    build(8)
    many = counts(client, agents[0])
    assert few == many
    assert {route: n for route, n in many.items() if route in PINNED} == PINNED

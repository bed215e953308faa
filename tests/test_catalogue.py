"""The public catalogue: server-rendered search and agent pages."""

from __future__ import annotations

import html
import io
import json
import re
from typing import Any

import pytest
from django.apps import apps
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from cards import catalogue, crawling
from cards.models import Agent
from cards.rendering.store import agent_changed
from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert('pwned')</script>"
LINK = re.compile(r'href="/agents/([0-9a-f-]{36})"')


@pytest.fixture(autouse=True)
def _fresh_facets() -> None:
    cache.delete(catalogue.FACET_CACHE_KEY)


@pytest.fixture
def agents() -> dict[str, Agent]:
    translator = agent_from_card(
        minimal_card(
            name="Polyglot",
            description="Translates documents between languages.",
            provider={"organization": "Lingua Corp", "url": "https://lingua.example.com"},
            defaultInputModes=["text/plain"],
            defaultOutputModes=["text/plain", "text/html"],
            skills=[
                {
                    "id": "translate",
                    "name": "Translate",
                    "description": "Translate text.",
                    "tags": ["translation", "Language"],
                },
                {
                    "id": "html",
                    "name": "Translate HTML",
                    "description": "Keeps markup.",
                    "tags": ["translation", "html"],
                    "inputModes": ["text/html"],
                    "outputModes": ["text/html"],
                },
            ],
        )
    )
    fighter = agent_from_card(
        minimal_card(
            name="Fight oracle",
            description="Predicts fights.",
            capabilities={
                "extensions": [{"uri": "https://ext.example.com/fight", "required": True}]
            },
            skills=[
                {
                    "id": "fight-comparison",
                    "name": "Fight",
                    "description": "Who wins.",
                    "tags": ["fight", "prediction"],
                    "inputModes": ["text/plain", "application/json; schema=fightComparison"],
                    "outputModes": ['application/json;schema="fightResponse"'],
                }
            ],
        )
    )
    hidden = {}
    for state in ("hidden", "rejected", "pending"):
        agent = agent_from_card(
            minimal_card(
                name=f"Secret {state} agent",
                description="Nobody should see this.",
                skills=[
                    {
                        "id": "secret",
                        "name": "Secret",
                        "description": "Secret.",
                        "tags": [f"secret-{state}"],
                        "inputModes": ["application/json;schema=secretSchema"],
                    }
                ],
            )
        )
        Agent.objects.filter(pk=agent.pk).update(moderation=state, moderation_reason="spam")
        agent_changed(agent.pk)
        hidden[state] = agent
    deleted = agent_from_card(minimal_card(name="Secret deleted agent"))
    Agent.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now())
    agent_changed(deleted.pk)
    hidden["deleted"] = deleted
    return {"translator": translator, "fighter": fighter, **hidden}


def listed(response: Any) -> set[str]:
    """Names of the agents in the result list (not the featured strip) of a search page."""
    body = response.content.decode()
    if '<ol class="results">' not in body:
        return set()
    results = body.split('<ol class="results">', 1)[1].split("</ol>", 1)[0]
    ids = set(LINK.findall(results))
    return set(Agent.objects.filter(pk__in=ids).values_list("name", flat=True))


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.content.decode()[:2000]
    assert response["Content-Type"].startswith("text/html")
    return response


# --- search ----------------------------------------------------------------------------------


def test_home_lists_public_agents_only(client: Client, agents: dict[str, Agent]) -> None:
    response = ok(client.get("/"))
    assert listed(response) == {"Polyglot", "Fight oracle"}
    body = response.content.decode()
    assert "Secret" not in body
    # Facets are counted over public agents only: a hidden agent's tags and schemas stay hidden.
    assert "secret-hidden" not in body and "secretSchema" not in body
    assert 'href="/?tag=translation"' in body
    assert "fightComparison" in body


def test_text_search(client: Client, agents: dict[str, Agent]) -> None:
    assert listed(ok(client.get("/", {"q": "translates"}))) == {"Polyglot"}
    assert listed(ok(client.get("/", {"q": "fights"}))) == {"Fight oracle"}
    # Text of hidden agents is not searchable by the public.
    assert listed(ok(client.get("/", {"q": "nobody"}))) == set()


def test_tag_search_is_case_insensitive_and_repeatable(
    client: Client, agents: dict[str, Agent]
) -> None:
    assert listed(ok(client.get("/", {"tag": "TRANSLATION"}))) == {"Polyglot"}
    assert listed(ok(client.get("/?tag=translation&tag=html"))) == {"Polyglot"}
    assert listed(ok(client.get("/?tag=translation&tag=fight"))) == set()
    assert listed(ok(client.get("/", {"tag": "secret-hidden"}))) == set()


def test_mode_search(client: Client, agents: dict[str, Agent]) -> None:
    found = ok(client.get("/", {"input_mode": 'Application/JSON; schema="fightComparison"'}))
    assert listed(found) == {"Fight oracle"}
    assert listed(ok(client.get("/", {"output_mode": "text/html"}))) == {"Polyglot"}
    assert listed(ok(client.get("/", {"output_mode": "text/*"}))) == {"Polyglot", "Fight oracle"}
    assert listed(ok(client.get("/", {"output_mode": "application/json"}))) == {"Fight oracle"}


def test_schema_search(client: Client, agents: dict[str, Agent]) -> None:
    assert listed(ok(client.get("/", {"schema": "fightResponse"}))) == {"Fight oracle"}
    assert listed(ok(client.get("/", {"schema": "secretSchema"}))) == set()


def test_facet_links_add_and_remove_filters(client: Client, agents: dict[str, Agent]) -> None:
    body = ok(client.get("/", {"tag": "translation"})).content.decode()
    # The active tag's link removes it; another tag's link adds to it.
    assert 'href="/"' in body
    assert 'href="/?tag=translation&amp;tag=html"' in body
    assert "tag: translation" in body


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"input_mode": "not a media type"}, "input_mode is not a media type"),
        ({"output_mode": "text/"}, "output_mode is not a media type"),
        ({"cursor": "@@not-a-cursor@@"}, "The page link is malformed"),
        ({"q": "a\x00b"}, "NUL character"),
        ({"tag": [f"t{i}" for i in range(11)]}, "at most 10 tags"),
        ({"schema": "x" * 1001}, "longer than 1000 characters"),
    ],
)
def test_bad_parameters_are_a_friendly_400(
    client: Client, agents: dict[str, Agent], params: dict[str, Any], message: str
) -> None:
    response = client.get("/", params)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "That search could not be run" in body
    assert html.escape(message, quote=False) in body
    assert listed(response) == set()


def test_pagination_walks_forwards_and_back_without_gaps(client: Client) -> None:
    for index in range(catalogue.PAGE_SIZE + 5):
        agent_from_card(minimal_card(name=f"Agent {index:02d}"))
    first = ok(client.get("/"))
    assert len(listed(first)) == catalogue.PAGE_SIZE
    next_url = re.search(r'href="([^"]+)" rel="next"', first.content.decode())
    assert next_url is not None
    second = ok(client.get(html.unescape(next_url.group(1))))
    assert len(listed(second)) == 5
    assert not listed(first) & listed(second)
    assert 'rel="next"' not in second.content.decode()
    previous = re.search(r'href="([^"]+)" rel="prev"', second.content.decode())
    assert previous is not None
    assert listed(ok(client.get(html.unescape(previous.group(1))))) == listed(first)


def test_featured_agents_are_shown_on_the_front_page(
    client: Client, agents: dict[str, Agent]
) -> None:
    Agent.objects.filter(pk=agents["fighter"].pk).update(moderation="featured")
    body = ok(client.get("/")).content.decode()
    assert "<h2>Featured</h2>" in body
    assert "Fight oracle" in body.split("<h2>Featured</h2>", 1)[1].split("<h2>", 1)[0]


# --- escaping --------------------------------------------------------------------------------


@pytest.fixture
def hostile() -> Agent:
    return agent_from_card(
        minimal_card(
            name=HOSTILE,
            description=f'Hostile markup sample. Hi <img src=x onerror="alert(1)"> {HOSTILE}',
            provider={"organization": HOSTILE, "url": "javascript:alert(1)"},
            documentationUrl="javascript:alert(2)",
            defaultInputModes=['application/json;schema="<b>x</b>"'],
            skills=[
                {
                    "id": HOSTILE,
                    "name": HOSTILE,
                    "description": HOSTILE,
                    "tags": [HOSTILE],
                    "examples": [HOSTILE],
                }
            ],
            capabilities={"extensions": [{"uri": HOSTILE, "description": HOSTILE}]},
        )
    )


def _assert_inert(response: Any) -> None:
    body = response.content.decode()
    # The only scripts are the registry's own static files ("Try it" forms, tryit/).
    scripts = re.findall(r"<script[^>]*>", body.lower())
    assert all(re.fullmatch(r'<script src="/static/[\w./-]+">', tag) for tag in scripts), scripts
    assert "<img src=x" not in body and "<b>x</b>" not in body
    assert 'href="javascript:' not in body.lower()
    assert "&lt;script&gt;" in body
    csp = response["Content-Security-Policy"]
    assert "default-src 'none'" in csp
    assert "script-src" not in csp or "script-src 'self';" in csp


def test_hostile_card_text_is_escaped_in_search(client: Client, hostile: Agent) -> None:
    response = ok(client.get("/"))
    _assert_inert(response)
    # PostgreSQL's text parser reads the markup as tags (no words); the plain words find it.
    found = ok(client.get("/", {"q": "hostile markup sample"}))
    assert "&lt;script&gt;" in found.content.decode()
    _assert_inert(found)
    _assert_inert(client.get("/", {"input_mode": HOSTILE}))


def test_hostile_card_text_is_escaped_on_the_agent_page(client: Client, hostile: Agent) -> None:
    response = ok(client.get(f"/agents/{hostile.pk}"))
    _assert_inert(response)
    body = response.content.decode()
    # Unsafe links are shown as text, not followed.
    assert "javascript:alert(1)" in body


# --- agent page ------------------------------------------------------------------------------


def test_agent_page_shows_badge_skills_modes_schemas_and_snippets(
    client: Client, agents: dict[str, Agent]
) -> None:
    fighter = agents["fighter"]
    response = ok(client.get(f"/agents/{fighter.pk}"))
    body = response.content.decode()
    assert f'<img src="/badges/{fighter.pk}.svg"' in body
    assert "Fight oracle" in body and "fight-comparison" in body and "Who wins." in body
    assert 'href="/?tag=fight"' in body
    assert "https://ext.example.com/fight" in body and "required" in body
    assert 'href="/?schema=fightComparison"' in body and 'href="/?schema=fightResponse"' in body
    assert f'href="/api/v1/agents/{fighter.pk}/card"' in body
    assert f'href="/api/v1/agents/{fighter.pk}"' in body
    snippets = re.findall(r"<h3>[^<]+</h3>\s*<pre>(.*?)</pre>", body, re.S)
    assert len(snippets) == 3
    markdown, html_snippet, rst = (html.unescape(s) for s in snippets)
    badge = f"http://testserver/badges/{fighter.pk}.svg"
    assert markdown.startswith("[![") and badge in markdown
    assert html_snippet.startswith("<a href=") and f'src="{badge}"' in html_snippet
    assert rst.startswith(f".. image:: {badge}")
    assert f"http://testserver/agents/{fighter.pk}" in markdown


@pytest.mark.skipif(not apps.is_installed("schemas_app"), reason="schemas_app is not installed")
def test_agent_page_shows_indexed_schema_documents(
    client: Client, agents: dict[str, Agent]
) -> None:
    from schemas_app.models import SchemaDocument, SchemaUse

    fighter = agents["fighter"]
    SchemaUse.objects.filter(agent=fighter).delete()
    document = SchemaDocument.objects.create(
        sha256="ab" * 32,
        content={"type": "object"},
        size=17,
        draft="2020-12",
        title="Fight comparison request",
        usable=True,
    )
    SchemaUse.objects.create(
        agent=fighter,
        document=document,
        role="declared",
        source="schemas",
        name="fightComparison",
        pointer="/schemas/fightComparison",
    )
    body = ok(client.get(f"/agents/{fighter.pk}")).content.decode()
    assert "Fight comparison request" in body and "abababababab" in body
    assert "declared, input" in body


@pytest.mark.parametrize("state", ["hidden", "rejected", "pending", "deleted"])
def test_agents_not_public_are_not_found(
    client: Client, agents: dict[str, Agent], state: str
) -> None:
    response = client.get(f"/agents/{agents[state].pk}")
    assert response.status_code == 404
    assert "Secret" not in response.content.decode()
    assert "No such agent" in response.content.decode()


def test_unknown_agent_is_not_found(client: Client, db: None) -> None:
    response = client.get("/agents/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404


def test_staff_see_agents_waiting_for_moderation(
    client: Client, agents: dict[str, Agent], django_user_model: Any
) -> None:
    staff = django_user_model.objects.create_user("curator", password="x", is_staff=True)
    client.force_login(staff)
    body = ok(client.get(f"/agents/{agents['hidden'].pk}")).content.decode()
    assert "not listed publicly" in body and "spam" in body
    assert client.get(f"/agents/{agents['deleted'].pk}").status_code == 404


def test_the_json_index_moved_under_the_api(client: Client, db: None) -> None:
    response = client.get("/api/v1/")
    assert response.status_code == 200
    assert response.json()["agents"] == "http://testserver/api/v1/agents"


# --- cost ------------------------------------------------------------------------------------


def test_query_counts_are_bounded(
    client: Client, agents: dict[str, Agent], django_assert_max_num_queries: Any
) -> None:
    for index in range(30):
        agent_from_card(
            minimal_card(
                name=f"Agent {index}",
                skills=[
                    {"id": f"s{n}", "name": f"S{n}", "description": "d", "tags": [f"t{n}"]}
                    for n in range(4)
                ],
            )
        )
    Agent.objects.filter(name="Agent 3").update(moderation="featured")
    # agents + their skills + featured + four facet queries (the facets are then cached)
    with django_assert_max_num_queries(7):
        ok(client.get("/"))
    with django_assert_max_num_queries(3):
        ok(client.get("/"))
    with django_assert_max_num_queries(3):
        ok(client.get("/", {"q": "agent", "tag": "t1", "output_mode": "text/plain"}))
    # agent, skills, extensions, default modes, schema uses, schema names, and for the "Try it"
    # section (a skill with a schema input) the declared schemas and the extension, and the
    # card's skills for their seed 001 inputFields (the Skill row does not keep them)
    with django_assert_max_num_queries(9):
        ok(client.get(f"/agents/{agents['fighter'].pk}"))


def test_the_favicon_is_served_so_page_loads_do_not_log_a_404(client: Client) -> None:
    response = client.get("/favicon.ico")

    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg") and b"</svg>" in response.content
    assert "max-age" in response["Cache-Control"]
    page = ok(client.get("/")).content.decode()
    assert '<link rel="icon" href="/favicon.ico" type="image/svg+xml">' in page


def test_facet_values_break_at_their_parameters_not_mid_word(
    client: Client, agents: dict[str, Agent]
) -> None:
    body = ok(client.get("/")).content.decode()

    # application/json;schema=fightComparison may wrap after '/' and ';' only.
    assert "application/<wbr>json;<wbr>schema=fightComparison</a>" in body
    css = body.split("<style>", 1)[1].split("</style>", 1)[0]
    facet_rules = [line for line in css.splitlines() if line.startswith(".facet li")]
    assert facet_rules and not any("anywhere" in line for line in facet_rules)


def _results_in_order(response: Any) -> list[str]:
    body = response.content.decode()
    results = body.split('<ol class="results">', 1)[1].split("</ol>", 1)[0]
    return LINK.findall(results)


def test_demo_agents_say_they_are_demo_data_and_claim_no_observation(
    client: Client, client_anon: Any
) -> None:
    from django.core.management import call_command

    from cards.management.commands.load_demo import DEMO_NOTE

    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", stdout=io.StringIO())  # twice: one note, still nothing observed

    rows = client_anon.get("/api/v1/agents", {"limit": 50}).json()["results"]
    assert len(rows) == 4
    for row in rows:
        assert row["description"].endswith(DEMO_NOTE) and row["description"].count(DEMO_NOTE) == 1
        detail = client_anon.get(f"/api/v1/agents/{row['id']}").json()
        for doc in (row, detail):
            assert doc["health"]["state"] == "unknown"
            assert doc["health"]["uptime_7d"] is None and doc["health"]["uptime_30d"] is None
            assert doc["health"]["last_success_at"] is None
            assert doc["crawl"]["last_http_status"] is None
            assert doc["crawl"]["last_crawled_at"] is None
            assert doc["crawl"]["next_crawl_at"] is None
            assert doc["crawl"]["last_error"] is None
        page = ok(client.get(f"/agents/{row['id']}")).content.decode()
        assert "not checked yet" in page and "last fetched" not in page
    assert "not checked yet" in ok(client.get("/")).content.decode()


def test_a_failed_crawl_shows_its_error_when_and_next_try_on_the_page_and_in_the_list(
    client: Client,
    client_auth: Any,
    client_anon: Any,
    card_server: Any,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # An agent with a card whose later crawl fails: still listed, with the failure in words.
    # (An agent whose crawls never produced a card is not public: tests/test_uncarded_agents.py.)
    card_server.serve("/forbidden.json", json.dumps(minimal_card(name="Once fine")).encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client_auth.post(
            "/api/v1/agents", {"url": card_server.url("/forbidden.json")}, format="json"
        )
    assert response.status_code == 202, response.content
    card_server.serve("/forbidden.json", b'{"error": "no"}', status=403)
    crawling.agent_crawl(agent_id=response.json()["id"])
    agent = Agent.objects.get(pk=response.json()["id"])
    assert agent.latest_snapshot_id is not None
    assert agent.last_error and agent.next_crawl_at is not None

    # Another account (anonymous) reads the same error in words.
    detail = client_anon.get(f"/api/v1/agents/{agent.pk}").json()
    assert detail["crawl"]["last_error"] == agent.last_error
    page = ok(client.get(f"/agents/{agent.pk}")).content.decode()
    assert 'id="last-error"' in page
    assert html.escape(agent.last_error, quote=False) in page
    assert "Next try " + agent.next_crawl_at.strftime("%Y-%m-%d %H:%M") in page
    listing = ok(client.get("/")).content.decode()
    assert "last crawl failed" in listing
    assert "next try " + agent.next_crawl_at.strftime("%Y-%m-%d %H:%M") in listing


def test_the_catalogue_lists_featured_then_healthy_valid_then_the_rest(client: Client) -> None:
    featured = agent_from_card(minimal_card(name="Featured one"))
    Agent.objects.filter(pk=featured.pk).update(moderation="featured")
    agent_changed(featured.pk)
    healthy = agent_from_card(minimal_card(name="Healthy one"))
    invalid = agent_from_card(minimal_card(name="Invalid one", skills=[]))
    # Newest of all and failing: it must not come first.
    failing = agent_from_card(minimal_card(name="Failing one"))
    Agent.objects.filter(pk=failing.pk).update(
        health=Agent.Health.DEGRADED, last_error="the host answered 503"
    )
    agent_changed(failing.pk)

    order = _results_in_order(ok(client.get("/")))

    # The rest (an invalid card, a failing agent) newest first.
    expected = [featured.pk, healthy.pk, failing.pk, invalid.pk]
    assert order == [str(pk) for pk in expected]
    assert invalid.valid is False


def test_the_catalogue_pages_walk_the_ranked_order_without_gaps(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cards.catalogue.search.PAGE_SIZE", 2)
    made = [agent_from_card(minimal_card(name=f"Agent {i}")) for i in range(3)]
    Agent.objects.filter(pk=made[0].pk).update(moderation="featured")
    agent_changed(made[0].pk)
    never = agent_from_card(minimal_card(name="Not checked"))
    Agent.objects.filter(pk=never.pk).update(health=Agent.Health.UNKNOWN)
    agent_changed(never.pk)

    first = ok(client.get("/"))
    cursor = re.search(r'href="/\?cursor=([^"]+)" rel="next"', first.content.decode())
    assert cursor is not None
    second = ok(client.get("/", {"cursor": html.unescape(cursor.group(1))}))

    seen = _results_in_order(first) + _results_in_order(second)
    assert seen == [str(made[0].pk), str(made[2].pk), str(made[1].pk), str(never.pk)]

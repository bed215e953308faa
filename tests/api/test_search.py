from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

FIGHT_SCHEMA_EXT = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)


@pytest.fixture
def agents() -> dict[str, Any]:
    translator = agent_from_card(
        minimal_card(
            name="Polyglot",
            description="Translates documents between languages.",
            provider={"organization": "Lingua Corp", "url": "https://lingua.example.com"},
            capabilities={"streaming": True},
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
            capabilities={"extensions": [{"uri": FIGHT_SCHEMA_EXT, "required": False}]},
            schemas={
                "fightComparison": {"type": "object", "required": ["a", "b"]},
                "fightResponse": {"type": "object"},
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
    broken = agent_from_card(minimal_card(name="Broken", skills=[]))
    return {"translator": translator, "fighter": fighter, "broken": broken}


def names(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["name"] for row in response.json()["results"]}


def test_it_finds_agents_by_tag_case_insensitively(client_anon: APIClient, agents: Any) -> None:
    assert names(client_anon.get("/api/v1/agents", {"tag": "TRANSLATION"})) == {"Polyglot"}


def test_repeated_tags_must_all_match(client_anon: APIClient, agents: Any) -> None:
    assert names(client_anon.get("/api/v1/agents?tag=translation&tag=html")) == {"Polyglot"}
    assert names(client_anon.get("/api/v1/agents?tag=translation&tag=fight")) == set()


@pytest.mark.parametrize(
    "mode",
    [
        "application/json;schema=fightComparison",
        "application/json; schema=fightComparison",
        'application/json;schema="fightComparison"',
        "Application/JSON;schema=fightComparison",
    ],
)
def test_equivalent_spellings_of_a_mode_find_the_same_agent(
    client_anon: APIClient, agents: Any, mode: str
) -> None:
    assert names(client_anon.get("/api/v1/agents", {"input_mode": mode})) == {"Fight oracle"}


def test_a_mode_without_parameters_matches_any_parameters(
    client_anon: APIClient, agents: Any
) -> None:
    assert names(client_anon.get("/api/v1/agents", {"output_mode": "application/json"})) == {
        "Fight oracle"
    }
    # Card-level default modes count too: the fight oracle's defaults are text/plain.
    assert names(client_anon.get("/api/v1/agents", {"output_mode": "text/*"})) == {
        "Polyglot",
        "Broken",
        "Fight oracle",
    }
    assert names(client_anon.get("/api/v1/agents", {"output_mode": "text/html"})) == {"Polyglot"}


def test_a_skill_without_modes_inherits_the_defaults(client_anon: APIClient, agents: Any) -> None:
    response = client_anon.get("/api/v1/skills", {"input_mode": "text/plain", "tag": "translation"})
    assert {row["id"] for row in response.json()["results"]} == {"translate"}


def test_output_schema_search_does_not_confuse_directions(
    client_anon: APIClient, agents: Any
) -> None:
    assert (
        names(
            client_anon.get(
                "/api/v1/agents", {"input_mode": "application/json;schema=fightResponse"}
            )
        )
        == set()
    )
    assert names(client_anon.get("/api/v1/agents", {"schema": "fightResponse"})) == {"Fight oracle"}


def test_it_filters_by_extension_provider_skill_and_streaming(
    client_anon: APIClient, agents: Any
) -> None:
    assert names(client_anon.get("/api/v1/agents", {"extension": FIGHT_SCHEMA_EXT})) == {
        "Fight oracle"
    }
    assert names(client_anon.get("/api/v1/agents", {"provider": "lingua corp"})) == {"Polyglot"}
    assert names(client_anon.get("/api/v1/agents", {"skill": "fight-comparison"})) == {
        "Fight oracle"
    }
    assert names(client_anon.get("/api/v1/agents", {"streaming": "true"})) == {"Polyglot"}


def test_it_filters_on_validity(client_anon: APIClient, agents: Any) -> None:
    assert names(client_anon.get("/api/v1/agents", {"valid": "false"})) == {"Broken"}
    assert "Broken" not in names(client_anon.get("/api/v1/agents", {"valid": "true"}))


def test_text_search_uses_words_from_descriptions_and_skills(
    client_anon: APIClient, agents: Any
) -> None:
    assert names(client_anon.get("/api/v1/agents", {"q": "translates documents"})) == {"Polyglot"}
    assert names(client_anon.get("/api/v1/agents", {"q": "markup"})) == {"Polyglot"}
    assert names(client_anon.get("/api/v1/agents", {"q": "fights"})) == {"Fight oracle"}


def test_cursor_pagination_walks_every_agent_once(client_anon: APIClient, agents: Any) -> None:
    seen: list[str] = []
    url: str | None = "/api/v1/agents?limit=1"
    while url:
        body = client_anon.get(url).json()
        assert set(body) == {"results", "next"}
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert len(seen) == len(set(seen)) == 3


@pytest.mark.parametrize(
    "query",
    [
        "cursor=garbage",
        "limit=0",
        "limit=1000",
        "limit=abc",
        "input_mode=not a type",
        "output_mode=;;",
        "valid=maybe",
    ],
)
def test_bad_search_parameters_are_problems(
    client_anon: APIClient, agents: Any, query: str
) -> None:
    response = client_anon.get("/api/v1/agents?" + query)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


def test_facets_count_agents(client_anon: APIClient, agents: Any) -> None:
    tags = {row["tag"]: row["agents"] for row in client_anon.get("/api/v1/tags").json()["results"]}
    assert tags["translation"] == 1 and tags["language"] == 1
    modes = client_anon.get("/api/v1/modes", {"direction": "input"}).json()["results"]
    assert {
        "media_type": "application/json;schema=fightComparison",
        "essence": "application/json",
        "schema": "fightComparison",
        "direction": "input",
        "agents": 1,
    } in modes
    extensions = client_anon.get("/api/v1/extensions").json()["results"]
    assert extensions == [{"uri": FIGHT_SCHEMA_EXT, "agents": 1, "required_by": 0}]


def test_the_search_list_does_not_query_per_agent(
    client_anon: APIClient, agents: Any, django_assert_max_num_queries: Any
) -> None:
    for i in range(10):
        agent_from_card(minimal_card(name=f"extra {i}"))
    with django_assert_max_num_queries(3):
        client_anon.get("/api/v1/agents?limit=20")


def test_agent_detail_has_the_validation_report_and_skills(
    client_anon: APIClient, agents: Any
) -> None:
    body = client_anon.get(f"/api/v1/agents/{agents['broken'].pk}").json()
    assert body["validation"]["valid"] is False
    assert any(f["pointer"] == "/skills" for f in body["validation"]["findings"])
    body = client_anon.get(f"/api/v1/agents/{agents['fighter'].pk}").json()
    assert body["skills"][0]["input_modes"] == [
        "text/plain",
        "application/json; schema=fightComparison",
    ]
    assert body["extensions"][0]["uri"] == FIGHT_SCHEMA_EXT
    assert body["links"]["card"].endswith(f"/api/v1/agents/{agents['fighter'].pk}/card")


def test_an_unknown_agent_is_a_404_problem(client_anon: APIClient, db: None) -> None:
    response = client_anon.get("/api/v1/agents/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    response = client_anon.get("/api/v1/agents/not-a-uuid")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_agent_detail_gives_badge_embed_snippets(client_anon: APIClient, agents: Any) -> None:
    body = client_anon.get(f"/api/v1/agents/{agents['translator'].pk}").json()
    assert set(body["embed"]) == {"markdown", "html", "rst"}
    assert f"/badges/{agents['translator'].pk}.svg" in body["embed"]["markdown"]
    assert body["links"]["badge"].endswith(f"/badges/{agents['translator'].pk}.svg")


@pytest.mark.parametrize(
    "query",
    [
        "min_score=101",
        "min_score=%C2%B2",
        "min_score=5&min_score=6",
        "min_score=1e2",
        "min_score=x",
    ],
)
def test_min_score_is_checked_with_or_without_q(query: str) -> None:
    for mode in ("", "&mode=lexical", "&q=weather", "&q=weather&mode=lexical"):
        response = APIClient().get(f"/api/v1/agents?{query}{mode}")
        assert response.status_code == 400, (query, mode, response.content)
        assert response["Content-Type"].startswith("application/problem+json")

"""No card makes a page expensive (issue 43, item 2): the worst cards the registry accepts
(bench/worst_card.py: the fetch cap filled with skills, with interfaces, with long escaped
strings), ingested through the real pipeline on PostgreSQL with a stored live report of many
rows, give every door an answer under 1 MB that shows the first items and a way to the rest;
a skill's "Try it" form is built on its own page, when a reader opens it."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from bench import worst_card
from cards.catalogue import agent as shown
from cards.catalogue import page_reads, paging
from cards.models import Agent
from cards.rendering import bounds
from cards.rendering.documents import when
from live import store
from tests.factories import agent_from_card
from tests.support import mcp_session, serving_asgi
from tests.tryit.pages import try_links

MEGABYTE = 1_000_000
ROWS = 3_000  # live check rows stored for each card


def ingest(kind: str) -> Agent:
    body = worst_card.card_bytes(kind, settings.REGISTRY_FETCH_MAX_BYTES)
    agent = agent_from_card(body, url=f"https://worst.example/{kind}/agent-card.json")
    assert agent.latest_snapshot_id is not None, agent.last_error
    now = timezone.now()
    report = worst_card.live_report(agent.interfaces, when=when(now) or "", rows=ROWS)
    store.record(agent.pk, report, now)
    agent.refresh_from_db()
    return agent


def small(response: Any) -> bytes:
    assert response.status_code == 200, response.content[:300]
    assert len(response.content) < MEGABYTE
    return bytes(response.content)


def walk(client: Client, url: str) -> list[Any]:
    """Every item of a paginated list, following ``next`` (each page under 1 MB)."""
    items: list[Any] = []
    while url:
        page = json.loads(small(client.get(url)))
        items += page["results"]
        url = page["next"]
    return items


def doors(client: Client, agent: Agent) -> dict[str, bytes]:
    a2a = worst_card.tag_query_call()
    return {
        "page": small(client.get(f"/agents/{agent.pk}")),
        "detail": small(client.get(f"/api/v1/agents/{agent.pk}")),
        "search": small(client.get(f"/api/v1/agents?tag={worst_card.TAG}&limit=100")),
        "a2a": small(client.post("/a2a", json.dumps(a2a), content_type="application/json")),
        "ard": small(client.get(f"/ard/agents/{agent.ard_identifier}")),
        "ard-search": small(
            client.post(
                "/ard/search",
                json.dumps({"query": {"text": "worst card"}, "pageSize": 100}),
                content_type="application/json",
            )
        ),
    }


@pytest.mark.django_db
def test_a_card_full_of_skills_shows_the_first_and_pages_to_the_rest() -> None:
    agent = ingest("skills")
    total = agent.skills.count()
    assert total > 6000
    client = Client()
    found = doors(client, agent)
    detail = json.loads(found["detail"])
    assert [s["id"] for s in detail["skills"]] == [f"s{i}" for i in range(bounds.DETAIL_SKILLS)]
    assert detail["skills_total"] == total
    everything = walk(client, detail["links"]["skills"] + "?limit=100")
    assert [s["id"] for s in everything] == [f"s{i}" for i in range(total)]
    row = json.loads(found["search"])["results"][0]
    assert len(row["skills"]) <= bounds.SUMMARY_SKILLS and row["skills_total"] == total
    home = small(client.get(f"/?tag={worst_card.TAG}")).decode()
    assert f"and {total - 6} more" in home  # the catalogue's result row counts them all

    page = found["page"].decode()
    assert f"1-20 of {total} skills" in page
    assert ">s19</code>" in page and ">s20</code>" not in page
    following = html.unescape(re.findall(r'href="([^"]*skills_page=2[^"]*)"', page)[0])
    second = small(client.get(following)).decode()
    assert ">s20</code>" in second and f"21-40 of {total} skills" in second

    # "Try it" is a link for each skill shown; the form is built on the skill's own page.
    assert "data-try=" not in page
    links = try_links(page)
    assert sorted(links) == sorted(f"s{i}" for i in range(bounds.DETAIL_SKILLS))
    form = small(client.get(links["s3"])).decode()
    assert form.count('class="try-block"') == 1 and 'id="try-s3"' in form
    check = client.post(
        f"/api/v1/agents/{agent.pk}/validate-payload",
        {"schema": "pair", "payload": {"a": "x", "b": "y"}},
        content_type="application/json",
    )
    assert check.status_code == 200 and check.json()["valid"] is True
    missing = client.get(f"/agents/{agent.pk}/try", {"skill": "no-such-skill"})
    assert missing.status_code == 404 and b"No such skill" in missing.content


@pytest.mark.django_db
def test_a_card_full_of_interfaces_and_a_long_report_shows_the_first_rows() -> None:
    agent = ingest("interfaces")
    declared = len(agent.interfaces)
    assert declared > 10_000
    client = Client()
    found = doors(client, agent)
    detail = json.loads(found["detail"])
    assert len(detail["interfaces"]) == bounds.DETAIL_INTERFACES
    assert detail["interfaces_total"] == declared
    urls = [i["url"] for i in walk(client, detail["links"]["interfaces"] + "?limit=100")]
    assert urls == [i["url"] for i in agent.interfaces]
    live = detail["live"]
    assert 0 < len(live["checks"]) <= bounds.DETAIL_CHECKS and live["checks_total"] == ROWS
    first = json.loads(small(client.get(detail["links"]["live_checks"] + "?limit=100")))
    assert len(first["results"]) == 100 and first["next"]
    second = json.loads(small(client.get(first["next"])))
    assert second["results"][0] == agent.live["checks"][100]

    page = found["page"].decode()
    assert f"1-20 of {declared} interfaces" in page
    per = paging.CHECKS_PER_PAGE
    assert f"1-{per} of {ROWS} checks" in page
    assert page.count('<tr id="interfaces">') == 1
    later = small(client.get(f"/agents/{agent.pk}?checks_page=3&interfaces_page=2")).decode()
    assert f"{2 * per + 1}-{3 * per} of {ROWS} checks" in later
    assert f"21-40 of {declared} interfaces" in later
    row = '<td><code>{}</code> <span class="muted">'  # an interface row, not a check's
    assert row.format(agent.interfaces[20]["url"]) in later
    assert row.format(agent.interfaces[19]["url"]) not in later


@pytest.mark.django_db
def test_a_card_of_long_escaped_strings_stays_small_everywhere() -> None:
    agent = ingest("strings")
    client = Client()
    found = doors(client, agent)
    detail = json.loads(found["detail"])
    assert detail["skills_total"] == agent.skills.count() > len(detail["skills"])
    assert len(detail["description"]) == len(agent.description) == 20000
    row = json.loads(found["search"])["results"][0]
    assert len(row["description"]) == bounds.SUMMARY_DESCRIPTION
    entry = json.loads(found["ard"])
    assert len(entry["tags"]) == bounds.ARD_TAGS and entry["metadata"]["tagsTotal"] > 50
    page = found["page"].decode()
    assert f"and {100 - shown.SKILL_TAGS} more" in page  # a skill's first tags of 100
    assert f"And {100 - page_reads.EXTENSIONS_SHOWN} more" in page  # the first extensions of 100


@pytest.mark.django_db(transaction=True)
def test_mcp_get_agent_answers_the_first_items_and_the_totals() -> None:
    agent = ingest("interfaces")

    async def body(session: Any) -> Any:
        return await session.call_tool("get_agent", {"id": str(agent.pk)})

    with serving_asgi() as base:
        result = mcp_session(base, body)
    text = result.content[0].text
    assert len(text.encode()) < MEGABYTE / 2  # the text and the structured copy: under 1 MB
    data = result.structuredContent
    assert data["interfaces_total"] == len(agent.interfaces)
    assert len(data["interfaces"]) == bounds.DETAIL_INTERFACES
    assert data["live"]["checks_total"] == ROWS
    assert data["links"]["live_checks"].endswith(f"/api/v1/agents/{agent.pk}/live-checks")

from __future__ import annotations

import json
from typing import Any

import pytest

from cards import crawling, services
from cards.models import Agent, Mode, Snapshot
from cards.tasks import crawl_agent
from tests.factories import minimal_card
from tests.support import CardServer, Reply

pytestmark = pytest.mark.django_db


def make_agent(url: str, *, discover: bool = False) -> Agent:
    return Agent.objects.create(url=url, card_url="" if discover else url, discover=discover)


def test_a_crawl_stores_one_snapshot_per_distinct_content(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/a.json", json.dumps(minimal_card(version="1.0.0")).encode())
    agent = make_agent(url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    assert crawling.agent_crawl(agent_id=agent.pk) == "unchanged"
    assert Snapshot.objects.filter(agent=agent).count() == 1
    card_server.serve("/a.json", json.dumps(minimal_card(version="1.1.0")).encode())
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    agent.refresh_from_db()
    assert agent.version == "1.1.0"
    assert Snapshot.objects.filter(agent=agent).count() == 2
    assert agent.fetch_ms is not None and agent.last_crawled_at is not None


def test_a_conditional_get_answered_304_is_a_success_without_a_snapshot(
    card_server: CardServer, loopback_allowed: None
) -> None:
    body = json.dumps(minimal_card()).encode()

    def etagged(handler: Any) -> Reply:
        if handler.headers.get("If-None-Match") == '"v1"':
            return Reply(status=304, headers={"ETag": '"v1"'})
        return Reply(body=body, headers={"Content-Type": "application/json", "ETag": '"v1"'})

    card_server.routes["/e.json"] = etagged
    agent = make_agent(card_server.url("/e.json"))
    assert crawling.agent_crawl(agent_id=agent.pk) == "stored"
    assert crawling.agent_crawl(agent_id=agent.pk) == "not-modified"
    agent.refresh_from_db()
    assert agent.status == "ok" and agent.last_http_status == 304
    assert Snapshot.objects.filter(agent=agent).count() == 1


def test_a_server_error_is_transient_and_recorded(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/down.json", b"oops", status=503, headers={"Retry-After": "120"})
    agent = make_agent(url)
    with pytest.raises(services.TransientCrawlError) as caught:
        crawling.agent_crawl(agent_id=agent.pk)
    assert caught.value.retry_after == 120
    agent.refresh_from_db()
    assert agent.status == "error" and agent.last_http_status == 503
    assert agent.last_error


def test_a_missing_card_is_permanent(card_server: CardServer, loopback_allowed: None) -> None:
    agent = make_agent(card_server.origin, discover=True)
    assert crawling.agent_crawl(agent_id=agent.pk) == "error"
    agent.refresh_from_db()
    assert "agent-card.json" in agent.last_error and "agent.json" in agent.last_error
    assert agent.last_http_status == 404


def test_the_task_records_a_transient_failure_without_raising_in_eager_mode(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/busy.json", b"", status=429, headers={"Retry-After": "5"})
    agent = make_agent(url)
    assert crawl_agent.apply(args=[str(agent.pk)]).get() == "error"
    agent.refresh_from_db()
    assert agent.last_http_status == 429


def test_invalid_json_keeps_what_was_indexed_before(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/c.json", json.dumps(minimal_card(name="Good")).encode())
    agent = make_agent(url)
    crawling.agent_crawl(agent_id=agent.pk)
    modes_before = Mode.objects.filter(agent=agent).count()
    card_server.serve("/c.json", b'{"name": "broken",')
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "error"
    assert agent.valid is False
    assert agent.name == "Good"
    assert Mode.objects.filter(agent=agent).count() == modes_before
    assert Snapshot.objects.filter(agent=agent).count() == 2


def test_a_redirect_to_a_refused_address_ends_up_on_the_agent(
    card_server: CardServer, loopback_allowed: None
) -> None:
    card_server.routes["/hop"] = Reply(
        status=302, headers={"Location": "http://10.0.0.7/card.json"}
    )
    agent = make_agent(card_server.url("/hop"))
    assert crawling.agent_crawl(agent_id=agent.pk) == "error"
    agent.refresh_from_db()
    assert "10.0.0.7" in agent.last_error
    assert agent.last_error_code == "address-refused"


def test_html_is_refused_as_a_card(card_server: CardServer, loopback_allowed: None) -> None:
    url = card_server.serve("/page", b"<html></html>", content_type="text/html")
    agent = make_agent(url)
    assert crawling.agent_crawl(agent_id=agent.pk) == "error"
    agent.refresh_from_db()
    assert agent.last_error_code == "content-type"


def test_a_card_served_as_text_plain_is_accepted_with_a_warning(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve(
        "/t.json", json.dumps(minimal_card()).encode(), content_type="text/plain"
    )
    agent = make_agent(url)
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "ok"
    assert "fetch.lenient-content-type" in {f["code"] for f in agent.findings}


def test_a_nul_character_is_reported_not_crashed_on(
    card_server: CardServer, loopback_allowed: None
) -> None:
    url = card_server.serve("/n.json", json.dumps(minimal_card(name="a\u0000b")).encode())
    agent = make_agent(url)
    crawling.agent_crawl(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "error"
    assert "json.nul-character" in {f["code"] for f in agent.findings}


def test_crawling_a_deleted_agent_is_a_no_op(db: None) -> None:
    assert crawling.agent_crawl(agent_id="00000000-0000-0000-0000-000000000000") == "missing"

"""A "Try it" send to a skill with seed 001 ``inputFields``: the real a2a-sdk agent of
tests/live on loopback, its card carrying the Book Review fields on its text skill ("echo"),
ingested through the real crawl. The message is one data part of plain ``application/json``."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from cards.models import Agent
from tests.live.agents import LiveAgent
from tests.live.cards import CARD_PATH
from tests.live.sdk_agent import sdk_app, served_card
from tests.live.serving import RequestLog, serving
from tests.schemas.test_fields import BOOK_REVIEW
from tests.tryit.test_send import account, ingest, live_settings

__all__ = ["live_settings"]  # the fixture, imported to be used here

pytestmark = pytest.mark.django_db

BOOK = {"bookTitle": "Charlotte's Web", "authorName": "E. B. White"}


@contextmanager
def reviewer_agent() -> Iterator[LiveAgent]:
    """a2a-sdk's server as in tests/live, whose card's "echo" skill also declares inputFields
    (the SDK's card model has no room for them: the served document gets them added)."""
    log, received = RequestLog(), list[dict[str, Any]]()

    def app_for(origin: str) -> ASGIApp:
        inner = sdk_app(origin, version="1.0", received=received)
        _card, document = served_card(origin, "1.0")
        document = copy.deepcopy(document)
        for skill in document["skills"]:
            if skill["id"] == "echo":
                skill["inputFields"] = copy.deepcopy(BOOK_REVIEW)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"] == CARD_PATH:
                await JSONResponse(document)(scope, receive, send)
                return
            await inner(scope, receive, send)

        return log.middleware(app)

    with serving(app_for) as origin:
        yield LiveAgent("sdk-fields", origin, {}, received, log)


def test_a_send_to_a_skill_with_input_fields_completes(live_settings: Any) -> None:
    alice, client = account("alice")
    with reviewer_agent() as running:
        row = ingest(running, alice, opted_in=True)
        url = f"/api/v1/agents/{row.pk}/try"
        invalid = client.post(url, {"skill": "echo", "payload": {"bookTitle": ""}}, format="json")
        response = client.post(url, {"skill": "echo", "payload": BOOK}, format="json")
    # The composed schema refuses a payload missing a required field, and nothing is sent.
    assert invalid.status_code == 422, invalid.content
    assert {e["pointer"] for e in invalid.json()["errors"]} == {"/payload", "/payload/bookTitle"}
    assert response.status_code == 200, response.content
    result = response.json()
    assert (result["kind"], result["state"]) == ("task", "TASK_STATE_COMPLETED")
    # One message reached the agent: one data part, plain application/json, the fields as keys.
    assert len(running.received) == 1
    assert running.received[0]["parts"] == [{"data": BOOK, "mediaType": "application/json"}]
    assert Agent.objects.get(pk=row.pk).live["messages"]["sent"] == 1


def test_an_unknown_skill_is_not_found_and_nothing_is_sent(live_settings: Any) -> None:
    alice, client = account("alice")
    with reviewer_agent() as running:
        row = ingest(running, alice, opted_in=True)
        unknown = client.post(
            f"/api/v1/agents/{row.pk}/try", {"skill": "nope", "payload": {}}, format="json"
        )
    assert unknown.status_code == 404
    assert unknown.json()["type"].endswith("no-such-skill")
    assert running.received == []

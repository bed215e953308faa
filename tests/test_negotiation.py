"""Content negotiation's short cut gives DRF's own answer, and leaves every other case to DRF."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.test import APIClient, APIRequestFactory

from registry.negotiation import JsonFirstNegotiation
from tests.factories import agent_from_card, minimal_card


class _Counting(JsonFirstNegotiation):
    parsed = 0

    def _get_parsed_accept_list(self, request: Any) -> Any:
        type(self).parsed += 1
        return super()._get_parsed_accept_list(request)  # type: ignore[misc]


def _request(path: str, accept: str | None) -> Request:
    extra: dict[str, Any] = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(APIRequestFactory().get(path, **extra))


def test_the_api_uses_it() -> None:
    assert api_settings.DEFAULT_CONTENT_NEGOTIATION_CLASS is JsonFirstNegotiation


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
def test_the_common_requests_get_drfs_answer_without_parsing_accept(accept: str | None) -> None:
    renderers = [JSONRenderer()]
    _Counting.parsed = 0
    fast = _Counting().select_renderer(_request("/api/v1/agents", accept), renderers)
    drf = DefaultContentNegotiation().select_renderer(_request("/api/v1/agents", accept), renderers)
    assert (fast[0], fast[1]) == (drf[0], drf[1])
    assert _Counting.parsed == 0


@pytest.mark.parametrize(
    ("path", "accept", "renderers"),
    [
        ("/api/v1/agents", "application/json; indent=4", [JSONRenderer()]),
        ("/api/v1/agents", "text/html", [JSONRenderer(), BrowsableAPIRenderer()]),
        ("/api/v1/agents?format=api", None, [JSONRenderer(), BrowsableAPIRenderer()]),
        ("/api/v1/agents", "*/*", [BrowsableAPIRenderer(), JSONRenderer()]),
    ],
)
def test_everything_else_goes_through_drf(path: str, accept: str | None, renderers: Any) -> None:
    _Counting.parsed = 0
    fast = _Counting().select_renderer(_request(path, accept), renderers)
    drf = DefaultContentNegotiation().select_renderer(_request(path, accept), renderers)
    assert (type(fast[0]), fast[1]) == (type(drf[0]), drf[1])
    assert _Counting.parsed == 1


@pytest.mark.django_db
def test_fetch_by_id_answers_json_and_still_refuses_what_it_cannot_render() -> None:
    owner = get_user_model().objects.create_user("negotiation-owner", password="x" * 16)
    stranger = APIClient()
    agent = agent_from_card(minimal_card(name="Negotiated"))
    agent.submitted_by = owner
    agent.save(update_fields=["submitted_by"])
    mine = APIClient()
    mine.force_authenticate(owner)
    for client in (stranger, mine):
        for accept in (None, "*/*", "application/json"):
            extra: dict[str, Any] = {} if accept is None else {"HTTP_ACCEPT": accept}
            answer = client.get(f"/api/v1/agents/{agent.pk}", **extra)
            assert answer.status_code == 200
            assert answer["Content-Type"] == "application/json"
            assert answer.json()["id"] == str(agent.pk)
        assert answer.json()["owned"] is (client is mine)
        refused = client.get(f"/api/v1/agents/{agent.pk}", HTTP_ACCEPT="application/xml")
        assert refused.status_code == 406
        assert refused["Content-Type"] == "application/problem+json"

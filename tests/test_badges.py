"""Badges: the SVG for every state, escaping of hostile text, caching headers and 304s."""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from cards.badges import (
    DEFAULT_LABEL,
    MAX_LABEL_CHARS,
    STATES,
    badge_state,
    embed_snippets,
    label_from_query,
    render_badge,
    text_width,
)
from cards.models import Agent
from tests.factories import agent_from_card, minimal_card

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = [
    "<script>alert(1)</script>",
    "Tom & Jerry",
    "\"double\" and 'single'",
    "]]><x/>",
    "<![CDATA[boom]]>",
    "&amp; &#x41; &bogus;",
    "ctrl\x00\x01\x1b\x7f\x85chars",
    "line\nbreak\ttab",
    "\ufffe\uffff nonchars",
    "日本語 ラベル",
]


def parse(svg: str | bytes) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return [node.text or "" for node in root.iter(f"{SVG}text")]


def badge(client: Client, agent_id: Any, **extra: Any) -> Any:
    return client.get(f"/badges/{agent_id}.svg", **extra)


def set_state(agent: Agent, **fields: Any) -> Agent:
    Agent.objects.filter(pk=agent.pk).update(**fields)
    agent.refresh_from_db()
    return agent


# --- rendering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(STATES))
def test_every_state_renders_well_formed_accessible_svg(key: str) -> None:
    state = STATES[key]
    root = parse(render_badge("A2A", key))
    assert root.get("role") == "img"
    assert root.get("aria-label") == f"A2A: {state.message}"
    assert root.find(f"{SVG}title").text == f"A2A: {state.message}"  # type: ignore[union-attr]
    assert texts(root) == ["A2A", "A2A", state.message, state.message]
    fills = [rect.get("fill") for rect in root.iter(f"{SVG}rect")]
    assert state.colour in fills and "#555" in fills
    widths = [int(rect.get("width", "0")) for rect in root.iter(f"{SVG}rect")]
    assert int(root.get("width", "0")) == widths[1] + widths[2]  # label box + message box
    assert root.get("height") == "20"


def test_text_widths_come_from_the_table_and_are_odd() -> None:
    assert text_width("A2A") % 2 == 1 and text_width("verified") % 2 == 1
    assert text_width("mmmm") > text_width("iiii")
    assert text_width("é") == text_width("e")  # accented letters measure as their base
    assert text_width("日本") > text_width("ab")  # wide characters take a whole em
    assert text_width("a\u0301") == text_width("a")  # combining marks take no room


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_labels_are_escaped_and_the_svg_stays_well_formed(hostile: str) -> None:
    label = label_from_query(hostile)
    svg = render_badge(label, "verified")
    root = parse(svg)  # would raise on unescaped markup or characters XML cannot hold
    assert not [node for node in root.iter() if node.tag.endswith("script")]
    assert "<script" not in svg and "<x/>" not in svg and "<![CDATA[" not in svg
    assert texts(root)[0] == label
    assert root.find(f"{SVG}title").text == f"{label}: verified"  # type: ignore[union-attr]
    assert root.get("aria-label") == f"{label}: verified"


def test_labels_are_cleaned_capped_and_default_to_a2a() -> None:
    assert label_from_query(None) == DEFAULT_LABEL
    assert label_from_query("   ") == DEFAULT_LABEL
    assert label_from_query("\x00\x01") == DEFAULT_LABEL
    assert label_from_query("line\nbreak") == "line break"
    assert len(label_from_query("x" * 500)) == MAX_LABEL_CHARS


# --- states -----------------------------------------------------------------------------------


@pytest.fixture
def agent(db: None) -> Agent:
    return agent_from_card(minimal_card(name="Badge agent"))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"signature_status": "verified", "valid": True}, "verified"),
        ({"signature_status": "unbound-key", "valid": True}, "valid"),
        ({"signature_status": "key-unavailable", "valid": True}, "valid"),
        ({"signature_status": "unsigned", "valid": True}, "unsigned"),
        ({"signature_status": "verified", "valid": False}, "invalid"),
        ({"signature_status": "invalid", "valid": True}, "bad-signature"),
        ({"signature_status": "verified", "health": "unreachable"}, "unreachable"),
        ({"signature_status": "verified", "health": "gone"}, "unreachable"),
        ({"health": "degraded", "signature_status": "unsigned", "valid": True}, "unsigned"),
    ],
)
def test_the_badge_follows_the_agent_state(
    agent: Agent, client: Client, fields: dict[str, Any], expected: str
) -> None:
    set_state(agent, **fields)
    assert badge_state(agent).key == expected
    response = badge(client, agent.pk)
    assert response.status_code == 200
    assert texts(parse(response.content))[2] == STATES[expected].message


def test_an_agent_never_fetched_gets_the_unknown_badge(
    db: None, client: Client, django_user_model: Any
) -> None:
    # Without a card the agent is not public (cards.reads.gate), and a badge is the same for
    # everyone, its owner included: the grey "unknown agent" until the first card.
    owner = django_user_model.objects.create_user("owner")
    agent = Agent.objects.create(url="https://new.example.com/agent-card.json", submitted_by=owner)
    client.force_login(owner)
    response = badge(client, agent.pk)
    assert response.status_code == 404
    assert texts(parse(response.content))[2] == "unknown agent"


@pytest.mark.parametrize(
    "fields",
    [
        {"moderation": "hidden"},
        {"moderation": "rejected"},
        {"moderation": "pending"},
        {"deleted_at": timezone.now()},
    ],
)
def test_agents_hidden_from_the_public_get_the_unknown_badge(
    agent: Agent, client: Client, fields: dict[str, Any]
) -> None:
    set_state(agent, **fields)
    staff = get_user_model().objects.create_user(username="curator", is_staff=True)
    client.force_login(staff)  # a badge is the same for everyone, staff included
    response = badge(client, agent.pk)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("image/svg+xml")
    root = parse(response.content)
    assert texts(root)[2] == "unknown agent"
    assert STATES["unknown"].colour in [r.get("fill") for r in root.iter(f"{SVG}rect")]


# A fixed id, not uuid4(): xdist's workers must collect the same test ids.
@pytest.mark.parametrize(
    "ident", ["3f0b8c2e-9d1a-4e57-8b6c-0a2d4f6e8c10", "not-a-uuid", "%3Cscript%3E"]
)
def test_unknown_ids_get_a_grey_404_badge(db: None, client: Client, ident: str) -> None:
    response = badge(client, ident)
    assert response.status_code == 404
    assert texts(parse(response.content))[2] == "unknown agent"


def test_featured_agents_have_badges(agent: Agent, client: Client) -> None:
    set_state(agent, moderation="featured", signature_status="verified")
    assert badge(client, agent.pk).status_code == 200


# --- HTTP -------------------------------------------------------------------------------------


def test_badge_headers(agent: Agent, client: Client) -> None:
    response = badge(client, agent.pk)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert "max-age=300" in response["Cache-Control"]
    assert response["X-Content-Type-Options"] == "nosniff"
    csp = response["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    etag = response["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/")
    assert "Cookie" not in response.get("Vary", "")


def test_a_matching_etag_gets_304_and_a_stale_one_the_badge(agent: Agent, client: Client) -> None:
    first = badge(client, agent.pk)
    etag = first["ETag"]
    again = badge(client, agent.pk, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == etag and "max-age=300" in again["Cache-Control"]
    listed = badge(client, agent.pk, HTTP_IF_NONE_MATCH=f'"other", W/{etag}')
    assert listed.status_code == 304
    set_state(agent, signature_status="verified")  # the state changed: a new body and ETag
    changed = badge(client, agent.pk, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert texts(parse(changed.content))[2] == "verified"


def test_the_etag_depends_on_the_label(agent: Agent, client: Client) -> None:
    plain = badge(client, agent.pk)
    labelled = badge(client, agent.pk, QUERY_STRING="label=my+agent")
    assert plain["ETag"] != labelled["ETag"]
    assert texts(parse(labelled.content))[0] == "my agent"
    other_label = badge(client, agent.pk, HTTP_IF_NONE_MATCH=plain["ETag"], QUERY_STRING="label=x")
    assert other_label.status_code == 200


def test_a_404_badge_ignores_if_none_match(db: None, client: Client) -> None:
    missing = uuid.uuid4()
    first = badge(client, missing)
    again = badge(client, missing, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 404 and again.content == first.content


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_labels_through_the_view(agent: Agent, client: Client, hostile: str) -> None:
    response = client.get(f"/badges/{agent.pk}.svg", {"label": hostile})
    assert response.status_code == 200
    root = parse(response.content)
    assert texts(root)[0] == label_from_query(hostile)


def test_head_is_answered_and_writes_are_refused(agent: Agent, client: Client) -> None:
    assert client.head(f"/badges/{agent.pk}.svg").status_code == 200
    assert client.post(f"/badges/{agent.pk}.svg").status_code == 405


def test_a_hostile_agent_name_does_not_reach_the_badge(db: None, client: Client) -> None:
    agent = agent_from_card(minimal_card(name="<script>alert(1)</script> & ]]>"))
    svg = badge(client, agent.pk).content
    parse(svg)
    assert b"<script" not in svg


# --- embed snippets ---------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_embed_snippets_point_at_the_badge(agent: Agent) -> None:
    snippets = embed_snippets(agent, "https://registry.example.com/")
    assert set(snippets) == {"markdown", "html", "rst"}
    image = f"https://registry.example.com/badges/{agent.pk}.svg"
    for text in snippets.values():
        assert image in text
    assert snippets["markdown"].startswith("[![A2A status of Badge agent](")
    assert f"https://registry.example.com/agents/{agent.pk}" in snippets["html"]
    assert snippets["rst"].splitlines()[0] == f".. image:: {image}"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_embed_snippets_escape_hostile_agent_names(agent: Agent, hostile: str) -> None:
    agent.name = hostile
    snippets = embed_snippets(agent, "https://registry.example.com")
    parser = _Tags()
    parser.feed(snippets["html"])
    assert [tag for tag, _ in parser.tags] == ["a", "img"]
    alt = parser.tags[1][1]["alt"] or ""
    assert alt.startswith("A2A status of")
    assert "\x00" not in alt and "\n" not in alt
    markdown = snippets["markdown"]
    assert markdown.count("](") == 2 and "\n" not in markdown
    for char in "<>[]":
        assert char not in markdown.split("](")[0][3:].replace(f"\\{char}", "")
    rst = snippets["rst"].splitlines()
    assert len(rst) == 3 and rst[1].startswith("   :alt: ") and rst[2].startswith("   :target: ")

"""The "Try it" section of an agent page as the server renders it (JavaScript off): the schema,
an example message in the agent's protocol version, the snippets and the output tables."""

from __future__ import annotations

import html
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from cards.models import Agent
from tests.factories import agent_from_card, minimal_card
from tests.tryit.pages import try_links, try_page

pytestmark = pytest.mark.django_db


def pre(page: str, css_class: str) -> str:
    found = re.search(rf'<pre class="{css_class}">(.*?)</pre>', page, re.S)
    assert found, f"no <pre class={css_class}>"
    return html.unescape(found.group(1))


@pytest.fixture
def oracle() -> Agent:
    call_command("load_demo", stdout=StringIO())
    return Agent.objects.get(name="Fight Club Oracle")


def test_the_demo_oracle_page_shows_the_message_snippets_and_outputs_without_script(
    oracle: Agent,
) -> None:
    response = try_page(Client(), oracle)
    page = response.content.decode()
    assert 'id="try-it"' in page
    # The exact v1.0 SendMessage, with the skill's example (which validates) as its data.
    body = json.loads(pre(page, "try-preview"))
    assert body["method"] == "SendMessage"
    message = body["params"]["message"]
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [
        {
            "data": {"a": "Lion", "b": "Tiger"},
            "mediaType": "application/json;schema=fightComparison",
        }
    ]
    assert "metadata" not in message  # the registry's check metadata is not the user's
    curl = pre(page, "try-curl")
    assert curl.startswith("curl -sS -X POST 'https://fights.demo.example/a2a/v1'")
    assert "-H 'A2A-Version: 1.0'" in curl and '"method": "SendMessage"' in curl
    python = pre(page, "try-python")
    assert 'create_client(\n        "https://fight-club.demo.example"' in python
    assert '"mediaType": "application/json;schema=fightComparison"' in python
    compile(python, "snippet.py", "exec")  # the snippet is Python
    # The output schema as a table; the input schema itself.
    assert "<caption><code>fightResponse</code>" in page
    assert "<td><code>probability</code></td><td>number 0..1</td>" in page
    assert "&quot;additionalProperties&quot;: false" in page
    # An example named by what it holds, as a link that works without JavaScript, and the
    # JSON editor seeded from the example.
    example = re.search(r'<a class="try-example" href="([^"]*)"[^>]*>([^<]*)</a>', page)
    assert example and example.group(2) == "A: Lion · B: Tiger"
    assert "Skill example" not in page
    assert html.unescape(example.group(1)).endswith("?skill=fight-comparison&example=1")
    # The message once: three sections (tabs with JavaScript, stacked without it), each with
    # a copy button that the script shows.
    assert re.findall(r'data-tab="([^"]*)"', page) == ["JSON", "curl", "Python"]
    assert page.count('<button type="button" class="try-copy" hidden>Copy</button>') == 3
    # The page's scripts are the registry's own static files, nothing inline.
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-eval" not in policy
    assert "/static/django_jsonform/react-json-form.js" in page
    assert "/static/tryit/try-it.js" in page
    # An anonymous reader gets no cookie (no CSRF token is needed without a session).
    assert "csrftoken" not in response.cookies
    # Nobody here may send.
    assert "try-send" not in page and '"sendUrl": null' in html.unescape(page)


def test_a_v03_agent_gets_message_send_with_a_kind_data_part() -> None:
    interface = {"url": "https://legacy.example/a2a", "protocolBinding": "JSONRPC"}
    card = minimal_card(
        name="Legacy", supportedInterfaces=[{**interface, "protocolVersion": "0.3"}]
    )
    card["schemas"] = {
        "pair": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    }
    card["skills"] = [
        {
            "id": "s",
            "name": "S",
            "description": "d",
            "tags": [],
            "examples": ['{"x": 3}'],
            "inputModes": ["application/json;schema=pair"],
            "outputModes": ["text/plain"],
        }
    ]
    agent = agent_from_card(card)
    page = try_page(Client(), agent).content.decode()
    body = json.loads(pre(page, "try-preview"))
    assert body["method"] == "message/send"
    part = body["params"]["message"]["parts"][0]
    assert part == {
        "kind": "data",
        "data": {"x": 3},
        "metadata": {"mimeType": "application/json;schema=pair"},
    }
    assert body["params"]["message"]["role"] == "user"


def test_a_page_without_schema_inputs_keeps_the_no_script_policy() -> None:
    agent = agent_from_card(minimal_card(name="Plain"))
    response = Client().get(f"/agents/{agent.pk}")
    assert 'id="try-it"' not in response.content.decode()
    assert not try_links(response.content.decode())
    assert "script-src" not in response["Content-Security-Policy"]


def test_a_schema_that_is_not_an_object_falls_back_to_the_json_editor_with_its_reason() -> None:
    card = minimal_card(name="Lists")
    card["schemas"] = {"many": {"type": "array", "items": {"type": "string"}}}
    card["skills"] = [
        {
            "id": "l",
            "name": "L",
            "description": "d",
            "tags": [],
            "inputModes": ["application/json;schema=many"],
            "outputModes": ["text/plain"],
        }
    ]
    agent = agent_from_card(card)
    page = try_page(Client(), agent).content.decode()
    assert "the schema does not describe an object with properties" in page
    assert 'class="try-json"' in page and "data-django-jsonform" not in page


def bout_planner() -> Agent:
    """A skill with three JSON examples and a schema with two, one of them the skill's."""
    card = minimal_card(name="Bout Planner")
    card["schemas"] = {
        "bout": {
            "type": "object",
            "properties": {
                "rounds": {"type": "integer", "minimum": 1, "maximum": 12},
                "style": {"type": "string", "title": "Fighting style"},
            },
            "required": ["rounds"],
            # The skill's third example again (one link), and one of the schema's own.
            "examples": [{"rounds": 12}, {"rounds": 5}],
        }
    }
    card["skills"] = [
        {
            "id": "plan",
            "name": "Plan a bout",
            "description": "Plans a bout.",
            "tags": [],
            "examples": [
                "plan a short bout",  # not JSON: no example link
                '{"rounds": 3, "style": "boxing"}',
                '{"rounds": 12}',
                "{}",
            ],
            "inputModes": ["application/json;schema=bout"],
            "outputModes": ["text/plain"],
        }
    ]
    return agent_from_card(card)


def test_an_example_link_starts_the_form_from_it_without_script() -> None:
    agent = bout_planner()
    page = try_page(Client(), agent).content.decode()
    links = re.findall(r'<a class="try-example" href="([^"]*)"[^>]*>([^<]*)</a>', page)
    # Each by its values and the fields' labels, once; an empty example (it does not validate
    # either: rounds is required) gives no link.
    labels = [label for _href, label in links]
    assert labels == ["Rounds: 3 · Fighting style: boxing", "Rounds: 12", "Rounds: 5"]
    assert 'aria-current="true">Rounds: 3' in page  # the form starts from the first
    second = Client().get(html.unescape(links[1][0]))
    assert second.status_code == 200
    body = second.content.decode()
    data = json.loads(pre(body, "try-preview"))["params"]["message"]["parts"][0]["data"]
    assert data == {"rounds": 12}
    assert '"rounds": 12' in pre(body, "try-curl") and '"rounds": 12' in pre(body, "try-python")
    assert json.loads(
        html.unescape(re.search(r'class="try-json"[^>]*>(.*?)</textarea>', body, re.S).group(1))
    ) == {"rounds": 12}
    assert 'aria-current="true">Rounds: 12' in body
    # A number that names no example is the page as it starts.
    for value in ("9", "0", "x", "-1", "1" * 40):
        other = Client().get(f"/agents/{agent.pk}/try?skill=plan&example={value}")
        assert other.status_code == 200
        data = json.loads(pre(other.content.decode(), "try-preview"))
        assert data["params"]["message"]["parts"][0]["data"] == {"rounds": 3, "style": "boxing"}

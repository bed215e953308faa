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
    # An example button and the JSON editor seeded from the example.
    assert 'class="try-example" data-example="0">Skill example 1</button>' in page
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

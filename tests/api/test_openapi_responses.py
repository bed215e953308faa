"""Real responses of every GET endpoint validate against the OpenAPI document's schemas.

The read endpoints send stored bytes without a serializer, so nothing but this test ties what
they send to what the document promises. Routes come from the OpenAPI document itself; each is
called with real ids and its response body checked against the declared 200 schema.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import jsonschema
import pytest
import rfc8785
from django.contrib.auth import get_user_model
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from rest_framework.test import APIClient

from tests.factories import agent_from_card, minimal_card

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
EXTENSION = "https://openapi.example/ext"


def as_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 to JSON Schema 2020-12: ``nullable: true`` becomes a ``null`` alternative."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: as_json_schema(value) for key, value in node.items()}
    if out.pop("nullable", False):
        if "type" in out:
            kinds = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*kinds, "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def pointer(*parts: str) -> str:
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


@pytest.fixture
def world() -> dict[str, Any]:
    agent = agent_from_card(
        minimal_card(
            name="Documented",
            defaultInputModes=["application/json;schema=Documented"],
            capabilities={"streaming": True, "extensions": [{"uri": EXTENSION, "required": True}]},
            schemas={"Documented": SCHEMA},
        )
    )
    agent_from_card(minimal_card(name="Second"))
    return {"agent": agent}


def test_every_get_response_matches_the_document(world: dict[str, Any]) -> None:
    anonymous = APIClient()
    # An account's own lists (tokens, origins: issue 44) need it signed in.
    signed_in = APIClient()
    signed_in.force_authenticate(get_user_model().objects.create_user(username="documented"))
    client = anonymous
    document = json.loads(client.get("/api/schema", HTTP_ACCEPT="application/json").content)
    root = as_json_schema(document)
    registry = Registry().with_resource("urn:api", Resource(root, DRAFT202012))
    values = {
        "{id}": str(world["agent"].pk),
        "{pk}": str(world["agent"].pk),
        "{name}": "Documented",
        "{uri}": EXTENSION,
        "{hex}": hashlib.sha256(rfc8785.dumps(SCHEMA)).hexdigest(),
    }
    checked = []
    for path, operations in document["paths"].items():
        operation = operations.get("get")
        if (
            operation is None
            or "{" in path.replace("{id}", "").replace("{pk}", "")
            and not any(key in path for key in values)
        ):
            continue
        content = operation.get("responses", {}).get("200", {}).get("content", {})
        if "application/json" not in content:
            continue
        concrete = path
        for key, value in values.items():
            concrete = concrete.replace(key, value)
        if "{" in concrete or concrete.startswith("/api/v1/imports/"):
            continue  # an import job is checked in tests/test_imports.py
        client = signed_in if operation.get("security") else anonymous
        response = client.get(
            concrete, {"limit": 1} if _paged(operation) else {}, HTTP_ACCEPT="application/json"
        )
        assert response.status_code == 200, (concrete, response.content[:300])
        media_type = response["Content-Type"].split(";")[0]
        assert media_type in content, (concrete, media_type)
        if media_type != "application/json":
            continue  # a declared non-JSON body (a JWT)
        schema = {
            "$ref": "urn:api#"
            + pointer(
                "paths", path, "get", "responses", "200", "content", "application/json", "schema"
            )
        }
        validator = jsonschema.Draft202012Validator(schema, registry=registry)
        errors = sorted(validator.iter_errors(json.loads(response.content)), key=str)
        assert errors == [], (concrete, [e.message for e in errors[:5]])
        checked.append(path)
    for expected in ("/api/v1/agents", "/api/v1/agents/{id}", "/api/v1/tags", "/api/v1/skills"):
        assert expected in checked


def _paged(operation: dict[str, Any]) -> bool:
    return any(p.get("name") == "limit" for p in operation.get("parameters", []))


def test_list_rows_and_the_detail_give_each_shared_field_one_shape(db: None) -> None:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from cards.models import Agent

    accounts = {}
    for name in ("owner", "someone-else"):
        user = get_user_model().objects.create_user(username=name)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        accounts[name] = (user, client)
    agent = agent_from_card(minimal_card(name="Shapes"))
    Agent.objects.filter(pk=agent.pk).update(submitted_by=accounts["owner"][0])

    for _, client in accounts.values():
        row = client.get("/api/v1/agents").json()["results"][0]
        detail = client.get(f"/api/v1/agents/{agent.pk}").json()
        # The same object shapes in a list row and the detail.
        assert set(row["health"]) == set(detail["health"])
        assert row["health"] == detail["health"]
        assert row["crawl"] == detail["crawl"]
        assert set(row["moderation"]) == set(detail["moderation"]) == {"state", "reason"}
        assert row["signature_status"] == detail["signature"]["status"] == "unsigned"
        # No reason given: null for the owner and for everyone else alike.
        assert row["moderation"]["reason"] is None and detail["moderation"]["reason"] is None
        assert detail["crawl"]["last_error"] is None

    # A row never fetched: nothing checked, so null in both, never "". Only its owner sees it
    # before its first card (cards.reads.gate).
    never = Agent.objects.create(
        url="https://never.example.com/card.json", submitted_by=accounts["someone-else"][0]
    )
    from cards.rendering.store import agent_changed

    agent_changed(never.pk)
    client = accounts["someone-else"][1]
    rows = {r["id"]: r for r in client.get("/api/v1/agents").json()["results"]}
    detail = client.get(f"/api/v1/agents/{never.pk}").json()
    assert rows[str(never.pk)]["signature_status"] is None
    assert detail["signature"]["status"] is None
    assert detail["health"]["state"] == "unknown" and detail["crawl"]["last_http_status"] is None

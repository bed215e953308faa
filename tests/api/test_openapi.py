from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient


@pytest.mark.django_db
def test_the_openapi_document_generates_without_warnings(tmp_path: Path) -> None:
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    text = target.read_text()
    assert "/api/v1/agents:" in text and "/api/v1/validate:" in text


def test_the_docs_ui_is_served_without_a_cdn(client: object) -> None:
    response = client.get("/api/docs")  # type: ignore[attr-defined]
    assert response.status_code == 200
    assert b"cdn.jsdelivr.net" not in response.content


@pytest.mark.django_db
def test_security_reads_the_right_way_round(client: Any) -> None:
    """Swagger UI draws an operation whose requirements include ``{}`` as authorized (a closed
    padlock) and token-only ones as open. Operations anyone may call list no requirement (a
    token stays optional, as their description says); the others list the token schemes only.
    Checked against what the API does: without a token, the token-only ones answer 401."""
    document = client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    needs_token: set[str] = set()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            security = operation.get("security")
            if security is None:
                assert "No token needed" in operation["description"], (method, path)
                continue
            assert {} not in security and security, (method, path)
            assert {name for req in security for name in req} <= {"tokenAuth", "cookieAuth"}
            assert "403" in operation["responses"]
            needs_token.add(f"{method.upper()} {path}")
    assert needs_token == {
        "POST /api/v1/agents",
        "DELETE /api/v1/agents/{id}",
        "PATCH /api/v1/agents/{id}",
        "POST /api/v1/agents/{id}/probe",
        "POST /api/v1/agents/{id}/recrawl",
        "POST /api/v1/agents/{id}/try",
        "POST /api/v1/imports",
        # The account's own tokens and origins (issue 44).
        "GET /api/v1/tokens",
        "POST /api/v1/tokens",
        "DELETE /api/v1/tokens/{token_id}",
        "GET /api/v1/origins",
        "POST /api/v1/origins",
        "GET /api/v1/origins/{origin_id}",
        "DELETE /api/v1/origins/{origin_id}",
        "POST /api/v1/origins/{origin_id}/verify",
        # Trusted publishing (issue 45); the exchange itself is anonymous.
        "GET /api/v1/origins/{origin_id}/trusted-publishers",
        "POST /api/v1/origins/{origin_id}/trusted-publishers",
        "DELETE /api/v1/origins/{origin_id}/trusted-publishers/{publisher_id}",
    }
    anonymous = APIClient()
    some = "00000000-0000-4000-8000-000000000000"
    assert anonymous.post("/api/v1/agents", {"url": "https://a.example/"}).status_code == 401
    assert anonymous.delete(f"/api/v1/agents/{some}").status_code == 401
    assert anonymous.post(f"/api/v1/agents/{some}/recrawl").status_code == 401
    assert anonymous.post(f"/api/v1/agents/{some}/probe").status_code == 401
    assert anonymous.post(f"/api/v1/agents/{some}/try", {}).status_code == 401
    assert anonymous.patch(f"/api/v1/agents/{some}", {"probe_messages": True}).status_code == 401
    assert anonymous.post("/api/v1/imports", {"urls": ["https://a.example/"]}).status_code == 401
    assert anonymous.get("/api/v1/agents").status_code == 200

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command


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

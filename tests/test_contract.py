"""The OpenAPI document is the contract: schemathesis, every check, against a live server.

A fixed seed and 40 examples per operation (schemathesis.toml) keep it deterministic and
meaningful: 5.5 to 10 minutes on a loaded two-core machine. A change that makes the API answer
something its document does not say fails here. The run writes its cache to ``.schemathesis/``
(ignored by git).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from tests.factories import agent_from_card, minimal_card

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


@pytest.mark.django_db(transaction=True)
def test_the_api_keeps_its_openapi_contract(
    live_server: Any, settings: Any, tmp_path: Path
) -> None:
    # The production fetch policy (https only, public addresses): what the document describes.
    settings.REGISTRY_SUBMISSION_RATE = ""
    settings.REGISTRY_VALIDATE_URL_ANON_RATE = ""
    settings.REGISTRY_FETCH_TOTAL_TIMEOUT = 1.0
    for index in range(3):
        agent_from_card(
            minimal_card(
                name=f"Contract {index}",
                defaultInputModes=["application/json;schema=Contract"],
                capabilities={"extensions": [{"uri": "https://contract.example/ext"}]},
                schemas={"Contract": SCHEMA},
            )
        )
    user = get_user_model().objects.create_user(username="contract")
    token = Token.objects.create(user=user).key
    report = tmp_path / "schemathesis.txt"
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{live_server.url}/api/schema",
            "--checks",
            "all",
            "--seed",
            "20261124",
            "--workers",
            "1",
            # Free-text path parameters (schema names, extension URIs) must be URL-safe after
            # encoding; hypothesis discards many candidates for them, which is not an API fault.
            "--suppress-health-check",
            "filter_too_much",
            "-H",
            f"Authorization: Token {token}",
            # Examples per operation and the import's own timeout: schemathesis.toml. A quicker
            # local run: CONTRACT_MAX_EXAMPLES=8.
            *(
                ["--max-examples", examples]
                if (examples := os.environ.get("CONTRACT_MAX_EXAMPLES"))
                else []
            ),
        ],
        cwd=ROOT,
        env={**os.environ, "SCHEMATHESIS_HOOKS": "tests.contract_hooks", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    report.write_text(result.stdout + result.stderr)
    assert result.returncode == 0, result.stdout[-6000:]

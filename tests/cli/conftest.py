"""The publisher CLI (cli/) against a live registry: its package on the path, an account with
a token, the live server's settings, and a helper that runs the CLI with click's CliRunner."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from starlette.types import ASGIApp

from tests.live.serving import serving, with_files

CLI_SOURCE = Path(__file__).resolve().parents[2] / "cli" / "src"
if str(CLI_SOURCE) not in sys.path:  # the CLI is its own distribution, not installed here
    sys.path.insert(0, str(CLI_SOURCE))

from a2a_registry_cli.main import cli  # noqa: E402


@dataclass
class Cli:
    """Runs ``a2a-registry`` against ``base`` with ``token`` (None: no token anywhere)."""

    base: str
    token: str | None
    config: Path

    def env(self, **extra: str | None) -> dict[str, str | None]:
        env: dict[str, str | None] = {
            "A2A_REGISTRY_URL": self.base,
            "A2A_REGISTRY_TOKEN": self.token,
            "XDG_CONFIG_HOME": str(self.config),
            "A2A_REGISTRY_ID_TOKEN": None,
            "ACTIONS_ID_TOKEN_REQUEST_URL": None,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": None,
        }
        env.update(extra)
        return env

    def __call__(self, *args: str, **env: str | None) -> Result:
        return CliRunner().invoke(cli, list(args), env=self.env(**env), catch_exceptions=False)

    def json(self, *args: str, **env: str | None) -> tuple[int, dict[str, Any]]:
        result = self("--json", *args, **env)
        return result.exit_code, json.loads(result.stdout)

    def api(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=60)


@pytest.fixture
def registry_settings(settings: Any, loopback_allowed: None) -> None:
    """Short live-check bounds and no probe cooldown: the probe runs in its request
    (CELERY_TASK_ALWAYS_EAGER; the live server is a thread of this process)."""
    settings.REGISTRY_LIVE_CHECKS = True
    settings.REGISTRY_LIVE_CONNECT_TIMEOUT = 2.0
    settings.REGISTRY_LIVE_READ_TIMEOUT = 3.0
    settings.REGISTRY_LIVE_REQUEST_TIMEOUT = 3.0
    settings.REGISTRY_LIVE_RUN_SECONDS = 20.0
    settings.REGISTRY_LIVE_PROBE_COOLDOWN_SECONDS = 0


@pytest.fixture
def run_cli(live_server: Any, registry_settings: None, tmp_path: Path) -> Cli:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.create_user(username="ci-publisher")
    return Cli(live_server.url, Token.objects.create(user=user).key, tmp_path / "config")


@dataclass
class Served:
    """An ASGI agent on loopback that also serves ``files`` (path -> text/plain body)."""

    origin: str
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def card_url(self) -> str:
        from tests.live.cards import CARD_PATH

        return self.origin + CARD_PATH


@contextmanager
def provable(make_app: Any) -> Iterator[Served]:
    """``make_app(origin)``'s agent, able to serve the registry's http challenge."""
    files: dict[str, bytes] = {}

    def app_for(origin: str) -> ASGIApp:
        return with_files(make_app(origin), files)

    with serving(app_for) as origin:
        yield Served(origin, files)


def prove(run: Cli, agent: Served) -> Result:
    """Prove ``agent``'s origin with ``verify-origin``: the claim's http challenge is served
    first (the claim is idempotent: the CLI's own claim answers the same challenge)."""
    with run.api() as api:
        claim = api.post("/api/v1/origins", json={"origin": agent.origin})
    assert claim.status_code in (200, 201), claim.text
    challenge = claim.json()["challenges"]["http"]
    agent.files[challenge["url"][len(agent.origin) :]] = challenge["body"].encode()
    result = run("verify-origin", agent.origin, "--method", "http", "--timeout", "10")
    assert result.exit_code == 0, result.output + result.stderr
    assert challenge["url"] in result.stdout and challenge["body"] in result.stdout
    return result

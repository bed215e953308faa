"""The CLI installed on its own (issue 45, "Done means"): a fresh venv, `pip install ./cli`
from PyPI's httpx and click, no Django; then, against a live registry and a local OIDC issuer,
CI jobs exchange their ID tokens (GitHub Actions' token service emulated on loopback, and
GitLab's A2A_REGISTRY_ID_TOKEN) and `publish` gates on a valid card (0), an invalid card (1)
and an agent that fails its live checks (2).

The venv is made once per session (in pytest's tmp); the install time and its size are printed
(docs/benchmarks.md, "The publisher CLI").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.cli.conftest import CLI_SOURCE, Cli, provable, prove
from tests.cli.test_commands import INVALID, sdk, wrong_error_code
from tests.publishers.oidc_issuer import LocalIssuer, running_issuer
from tests.support import CardServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WORKFLOW = ".github/workflows/release.yml"
REQUEST_TOKEN = "actions-request-token"


def size_of(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_symlink())


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `a2a-registry` script of a fresh venv with the CLI installed from cli/."""
    place = tmp_path_factory.mktemp("cli")
    venv = place / "venv"
    # A copy: pip builds in the source tree (build/, *.egg-info), which stays clean this way.
    source = place / "cli"
    shutil.copytree(CLI_SOURCE.parent, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    made = time.monotonic()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir"]
    subprocess.run([*pip, str(source)], check=True, timeout=600)
    done = time.monotonic()
    size = size_of(venv)
    print(
        f"\nCLI venv: created in {made - started:.1f} s, `pip install ./cli` in "
        f"{done - made:.1f} s, size {size / 1e6:.1f} MB"
    )
    python = venv / "bin" / "python"
    no_django = subprocess.run([str(python), "-c", "import django"], capture_output=True)
    assert no_django.returncode != 0  # a light distribution: no Django
    return venv / "bin" / "a2a-registry"


def run(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "ACTIONS_"))}
    return subprocess.run(
        [str(script), *args], capture_output=True, text=True, env={**clean, **env}, timeout=300
    )


@contextmanager
def actions_token_service(issuer: LocalIssuer, **claims: Any) -> Iterator[str]:
    """GitHub Actions' ID token service: GET ?audience=... with the request token as bearer
    answers {"value": <an ID token for that audience>}."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            audience = parse_qs(urlsplit(self.path).query).get("audience", [""])[0]
            if self.headers.get("Authorization") != f"Bearer {REQUEST_TOKEN}":
                self.send_response(403)
                self.end_headers()
                return
            body = json.dumps({"value": issuer.mint(aud=audience, **claims)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/token?api-version=2.0"
    finally:
        server.shutdown()
        server.server_close()


def test_the_installed_cli_validates_against_a_live_server(
    installed: Path, run_cli: Cli, card_server: CardServer
) -> None:
    helped = run(installed, "--help")
    assert helped.returncode == 0 and "verify-origin" in helped.stdout
    url = card_server.serve("/card.json", json.dumps(INVALID).encode())
    result = run(installed, "--json", "validate", url, A2A_REGISTRY_URL=run_cli.base)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["validation"]["valid"] is False


def trust(owner: Cli, origin: str, issuer: LocalIssuer, repository: str) -> None:
    with owner.api() as api:
        origin_id = next(
            o["id"] for o in api.get("/api/v1/origins").json() if o["origin"] == origin
        )
        body = {"issuer": issuer.url, "repository": repository, "workflow": WORKFLOW}
        answer = api.post(f"/api/v1/origins/{origin_id}/trusted-publishers", json=body)
    assert answer.status_code == 201, answer.text


def test_ci_jobs_publish_with_their_oidc_tokens(
    installed: Path, run_cli: Cli, card_server: CardServer, settings: Any
) -> None:
    with running_issuer() as issuer, provable(sdk) as good, provable(wrong_error_code) as broken:
        settings.REGISTRY_TRUSTED_ISSUERS = [issuer.url]
        bad = provable(lambda origin: sdk(origin))  # a third origin, serving an invalid card
        with bad as invalid_site:
            for agent, repository in (
                (good, "octo/good"),
                (broken, "octo/broken"),
                (invalid_site, "octo/invalid"),
            ):
                prove(run_cli, agent)
                trust(run_cli, agent.origin, issuer, repository)
            invalid_url = invalid_site.origin + "/bad/card.json"
            invalid_site.files["/bad/card.json"] = json.dumps(INVALID).encode()
            base = {"A2A_REGISTRY_URL": run_cli.base, "XDG_CONFIG_HOME": str(run_cli.config)}

            # GitHub Actions: `login` asks the token service, exchanges, stores; `publish` uses it.
            with actions_token_service(issuer, repository="octo/good") as service:
                github = {
                    **base,
                    "ACTIONS_ID_TOKEN_REQUEST_URL": service,
                    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": REQUEST_TOKEN,
                }
                logged = run(installed, "login", **github)
                assert logged.returncode == 0, logged.stderr
                assert "github-actions" in logged.stdout
            published = run(installed, "--json", "publish", good.card_url, **base)
            assert published.returncode == 0, published.stdout + published.stderr
            document = json.loads(published.stdout)
            assert document["live"]["outcome"] == "pass"
            assert document["publisher"]["verified"] is True

            # GitLab CI: the ID token in A2A_REGISTRY_ID_TOKEN, exchanged by `publish` itself.
            other = {**base, "XDG_CONFIG_HOME": str(run_cli.config / "gitlab")}
            token = issuer.mint(repository="octo/broken")
            failing = run(
                installed, "publish", broken.card_url, A2A_REGISTRY_ID_TOKEN=token, **other
            )
            assert failing.returncode == 2, failing.stdout + failing.stderr
            assert "Live checks: fail" in failing.stdout and "Exchanging" in failing.stderr

            token = issuer.mint(repository="octo/invalid")
            refused = run(installed, "publish", invalid_url, A2A_REGISTRY_ID_TOKEN=token, **other)
            assert refused.returncode == 1, refused.stdout + refused.stderr
            assert "INVALID" in refused.stdout

            # A replayed ID token is refused by the registry: exit 3 with its words.
            replay = run(installed, "publish", invalid_url, A2A_REGISTRY_ID_TOKEN=token, **other)
            assert replay.returncode == 3 and "Error:" in replay.stderr
    assert httpx  # the CLI's own dependency, also the tests'

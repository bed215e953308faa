"""`make run` as a newcomer uses it (issue 47): the port ``PORT`` names, an agent on this machine
submitted over plain http and checked live, the README's three steps as written, and the
catalogue's own 404 and 403 pages under its ``DEBUG``.

The commands are the Makefile's own (``make -n run``: tests/make_run.py), run as printed, on
SQLite in a temporary directory and a free port; ``load_demo`` is left out (the docs examples'
server runs it). Production's defaults stay strict: a registry started without `make run`'s
variables refuses the same agent."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs_blocks import DOCUMENTED_URL, all_blocks
from tests.make_run import ROOT, environment_of, run_commands
from tests.support import free_port

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

AGENT_PORT = "9999"  # the README's


def _clean_environment(directory: Path) -> dict[str, str]:
    """This machine's environment without the suite's database, broker, key or registry
    settings (the Makefile's line sets its own), SQLite in ``directory``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "REDIS_URL", "CELERY_", "DJANGO_", "REGISTRY_"))
    }
    env["REGISTRY_SQLITE_PATH"] = str(directory / "db.sqlite3")
    return env


def _get(url: str, accept: str = "application/json") -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def _stop(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """Stop a process started in a session of its own, and everything it started."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


@dataclass(frozen=True)
class Served:
    url: str
    env: dict[str, str]
    log: Path


def test_port_picks_the_port_and_8000_is_the_default() -> None:
    server = [line for line in run_commands() if "uvicorn" in line]
    assert len(server) == 1 and server[0].endswith("--host 127.0.0.1 --port 8000"), server
    other = [line for line in run_commands(8123) if "uvicorn" in line]
    assert other[0].endswith("--port 8123"), other


def test_make_run_fetches_loopback_http_and_production_defaults_do_not(tmp_path: Path) -> None:
    """The run target's variables let the fetch policy take a loopback http agent; without them
    (any other way of starting the registry) the defaults refuse it."""
    code = (
        "import django; django.setup()\n"
        "from cards.services import submitted_url_check\n"
        "try:\n"
        "    print('accepted', submitted_url_check('http://127.0.0.1:9999'))\n"
        "except Exception as exc:\n"
        "    print('refused:', getattr(exc, 'detail', exc))\n"
    )
    _, made = environment_of(next(line for line in run_commands() if "uvicorn" in line))
    base = dict(_clean_environment(tmp_path), DJANGO_SETTINGS_MODULE="registry.settings")
    answers = {}
    for name, env in {
        "make run": {**base, **made},
        "defaults": {**base, "DJANGO_SECRET_KEY": "test-only-secret-of-a-production-like-start"},
    }.items():
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        answers[name] = done.stdout.strip().splitlines()[-1]
    assert answers["make run"] == "accepted http://127.0.0.1:9999", answers
    assert answers["defaults"].startswith("refused: http: URLs are not fetched"), answers


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """migrate and uvicorn as `make run` runs them (PORT: a free port)."""
    work = tmp_path_factory.mktemp("make-run")
    port = free_port()
    lines = run_commands(port)
    migrate = next(line for line in lines if "manage.py migrate" in line)
    server = next(line for line in lines if "uvicorn" in line)
    env = _clean_environment(work)
    done = subprocess.run(
        ["bash", "-c", migrate], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    log = work / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", "exec " + server], cwd=ROOT, env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if _get(f"{url}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        yield Served(url=url, env=env, log=log)
    finally:
        _stop(process)


def _readme_block() -> str:
    found = [
        block.text
        for block in all_blocks()
        if block.path == "README.md" and "scripts/demo_agent.py" in block.text
    ]
    assert len(found) == 1, "the README's 'Try your own agent' block is missing"
    return found[0]


def test_the_readme_steps_submit_a_local_agent_and_show_its_live_checks(registry: Served) -> None:
    """The README's block as written (its address and the agent's port replaced by this run's):
    the demo agent starts, is submitted over plain http, and its live checks pass."""
    text = _readme_block()
    assert f"http://127.0.0.1:{AGENT_PORT}" in text and DOCUMENTED_URL in text
    agent_port = str(free_port())
    script = text.replace(DOCUMENTED_URL, registry.url).replace(AGENT_PORT, agent_port)
    # Files, not pipes: the agent the block leaves running keeps its output open.
    out_path, err_path = registry.log.with_name("block.out"), registry.log.with_name("block.err")
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        process = subprocess.Popen(
            ["bash", "-c", "set -eo pipefail\n" + script], cwd=ROOT, env=registry.env,
            stdout=out_file, stderr=err_file, start_new_session=True,
        )  # fmt: skip
    try:
        returncode = process.wait(timeout=240)
    finally:
        _stop(process)  # and the demo agent the block left running, in its process group
    out, err = out_path.read_text(), err_path.read_text()
    assert returncode == 0, f"{out[-2000:]}\n{err[-3000:]}\n{registry.log.read_text()}"
    *rows, page_line = out.strip().splitlines()
    page = re.fullmatch(rf"Its page: ({re.escape(registry.url)}/agents/[0-9a-f-]{{36}})", page_line)
    assert page is not None, out[-2000:]
    words = [row.split(" ", 2) for row in rows]
    outcomes = {w[1]: w[0] for w in words if w[0] in ("pass", "warn", "fail", "skip")}
    assert {"CORE-GET-002", "CORE-CANCEL-003", "VER-SERVER-002"} <= set(outcomes), out
    assert set(outcomes.values()) == {"pass"}, out  # the demo agent passes every check
    status, kind, body = _get(page[1], accept="text/html")
    assert status == 200 and kind.startswith("text/html")
    assert "Echo (local demo)" in body


def test_unknown_paths_get_the_catalogues_404_under_make_runs_debug(registry: Served) -> None:
    """docs/catalogue.md, "Small things": the catalogue's page, never Django's technical one."""
    status, kind, body = _get(f"{registry.url}/nope", accept="text/html,application/xhtml+xml")
    assert status == 404 and kind.startswith("text/html"), (status, kind)
    assert "Page not found" in body and "/nope" in body
    assert "URLconf" not in body and "Django" not in body
    status, kind, body = _get(f"{registry.url}/nope")  # a program: JSON, as with DEBUG off
    assert status == 404 and "json" in kind and json.loads(body)["status"] == 404


def test_a_csrf_failure_under_make_run_is_the_catalogues_403_page(registry: Served) -> None:
    request = urllib.request.Request(
        f"{registry.url}/accounts/logout/", data=b"", method="POST",
        headers={"Accept": "text/html"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    body = refused.value.read().decode()
    assert refused.value.code == 403
    assert "The form was not sent" in body and "cookie" in body
    assert "CSRF verification failed" not in body and "Django" not in body

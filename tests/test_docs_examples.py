"""Every code example in README.md and docs/*.md that talks to the registry runs here, against a
live registry started as `make run` starts it (SQLite, tasks in-process, the demo agents) on a
free loopback port, so a renamed client function fails CI, not a reader.

The convention (README.md, "Contributing docs"; the parsing is in tests/docs_blocks.py):

- A ``sh``/``bash``/``shell`` block naming ``http://127.0.0.1:8000``, or a ``python`` block naming
  it or ``https://registry.example.com``, is run with that address replaced by the live
  server's. It must exit 0; every ``curl`` in it must get a 2xx answer, and an answer that says
  it is JSON must parse (curl is a shim that checks both and passes the body on).
- Every other block carries ``<!-- not-run: why -->`` on the line before its fence: output
  samples, configuration, benchmarks, commands that need Docker or minutes. Each is one skipped
  case here with that reason, so pytest counts and lists them (``-ra``).
- A block that is neither fails ``test_every_block_is_run_or_says_why_not``: nothing is skipped
  silently, and a new file's blocks are met the day it lands.
- Placeholders: ``$TOKEN`` (a staff account's token), ``$ID`` and ``"3f1c..."`` (a demo agent's id).
- Examples that import ``mcp`` run twice: with the registry's pinned mcp 1.x, and with mcp 2.x
  from ``.venv/mcp2`` (``make docs-mcp2``, which ``make test`` builds; skipped with the reason
  where it is absent, a failure under CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs_blocks import (
    AGENT_PLACEHOLDER,
    DOCUMENTED_URL,
    EXAMPLE_ISSUER,
    ROOT,
    Block,
    all_blocks,
)
from tests.support import free_port, make_run_environment

BLOCKS = all_blocks()
RUN = [block for block in BLOCKS if block.kind in ("sh", "python")]
NOT_RUN = [block for block in BLOCKS if block.kind == "not-run"]
MCP2_PYTHON = Path(
    os.environ.get("DOCS_MCP2_PYTHON", Path(sys.executable).parent.parent / "mcp2/bin/python")
)
TIMEOUT = 180  # seconds for one example (the first search by meaning may convert the model)


@dataclass(frozen=True)
class Live:
    """The running registry and what an example's process gets."""

    url: str
    env: dict[str, str]
    work: Path


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def _get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        document = json.load(answer)
    assert isinstance(document, dict)
    return document


CURL_SHIM = '''#!{python}
"""curl as the docs' examples call it, but failing on an answer that is not 2xx or whose JSON
does not parse; the body still goes to stdout, so `$(curl ...)` works as it reads."""
import json, os, subprocess, sys, tempfile

with tempfile.NamedTemporaryFile() as body:
    done = subprocess.run(
        [{curl!r}, "-sS", "-o", body.name, "-w", "%{{http_code}} %{{content_type}}", *sys.argv[1:]],
        capture_output=True, text=True,
    )
    content = open(body.name, "rb").read()
try:
    sys.stdout.buffer.write(content)
    sys.stdout.flush()
except BrokenPipeError:  # `| head` read what it wanted
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
status, _, media = done.stdout.partition(" ")
problem = done.stderr.strip() if done.returncode else None
if problem is None and not status.startswith("2"):
    problem = "HTTP " + status + ": " + content[:300].decode(errors="replace")
if problem is None and "json" in media:
    try:
        json.loads(content)
    except ValueError as exc:
        problem = "not JSON (" + str(exc) + ")"
with open({log!r}, "a") as log:
    log.write(json.dumps({{"args": sys.argv[1:], "status": status, "problem": problem}}) + "\\n")
if problem is not None:
    sys.stderr.write("curl " + " ".join(sys.argv[1:]) + ": " + problem + "\\n")
    sys.exit(done.returncode or 22)
'''


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The registry as `make run` serves it (migrate, load_demo, uvicorn on the ASGI site, /mcp
    included), on SQLite in a temporary directory and a free port."""
    work = tmp_path_factory.mktemp("docs")
    # The examples run back to back from one address: no per-client limit.
    env = make_run_environment(work, REGISTRY_ANON_RATE="off")
    _manage(env, "migrate", "--noinput")
    _manage(env, "load_demo")
    token = _manage(env, "issue_token", "docs-reader", "--staff").strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = work / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "registry.asgi:application"]
            + ["--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            try:
                _get_json(f"{url}/healthz")
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        agents = _get_json(f"{url}/api/v1/agents?tag=translation")["results"]
        assert isinstance(agents, list) and agents, "the demo agents are missing"
        bin_dir = work / "bin"
        bin_dir.mkdir()
        curl = shutil.which("curl")
        assert curl is not None, "the examples need curl"
        shim = bin_dir / "curl"
        shim.write_text(
            CURL_SHIM.format(python=sys.executable, curl=curl, log=str(work / "curl.log"))
        )
        shim.chmod(0o755)
        example_env = dict(
            env,
            PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
            TOKEN=token,
            ID=str(agents[0]["id"]),
        )
        yield Live(url=url, env=example_env, work=work)
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)


def _curl_calls(live: Live) -> list[dict[str, object]]:
    log = live.work / "curl.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _run(block: Block, live: Live, python: Path) -> subprocess.CompletedProcess[str]:
    text = block.text.replace(DOCUMENTED_URL, live.url)
    if block.kind == "python":
        text = text.replace(EXAMPLE_ISSUER, live.url)
        text = text.replace(AGENT_PLACEHOLDER, json.dumps(live.env["ID"]))
        script = live.work / "example.py"
        script.write_text(text)
        command = [str(python), str(script)]
    else:
        command = ["bash", "-c", "set -eo pipefail\n" + text]
    return subprocess.run(
        command, env=live.env, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT
    )


def _cases() -> list[object]:
    cases: list[object] = []
    for block in RUN:
        cases.append(pytest.param(block, "pinned", id=block.where))
        if block.uses_mcp:
            cases.append(pytest.param(block, "mcp2", id=f"{block.where}[mcp2]"))
    return cases


@pytest.mark.parametrize(("block", "client"), _cases())
def test_the_example_runs_against_a_live_registry(block: Block, client: str, live: Live) -> None:
    python = Path(sys.executable)
    if client == "mcp2":
        if not MCP2_PYTHON.exists():
            message = f"mcp 2.x is not installed at {MCP2_PYTHON}: run `make docs-mcp2`"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        python = MCP2_PYTHON
    before = len(_curl_calls(live))
    done = _run(block, live, python)
    calls = _curl_calls(live)[before:]
    shown = textwrap.indent(block.text, "    ")
    assert done.returncode == 0, (
        f"{block.where} exited {done.returncode}:\n{shown}\n"
        f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    )
    if block.kind == "sh" and "curl" in block.text:
        assert calls, f"{block.where} names curl but made no request"
        assert all(call["problem"] is None for call in calls), calls


@pytest.mark.parametrize("block", NOT_RUN, ids=[block.where for block in NOT_RUN])
def test_a_block_marked_not_run_says_why(block: Block) -> None:
    assert block.not_run, f"{block.where}: `<!-- not-run: ... -->` needs a reason"
    pytest.skip(f"{block.where} not-run: {block.not_run}")


def test_every_block_is_run_or_says_why_not() -> None:
    unclassified = [
        f"{block.where} ({block.language or 'no language'})"
        for block in BLOCKS
        if block.kind == "unclassified"
    ]
    assert not unclassified, (
        "these blocks are neither run (a sh or python block naming "
        f"{DOCUMENTED_URL}) nor marked `<!-- not-run: why -->` on the line before "
        "the fence: " + ", ".join(unclassified)
    )


def test_the_docs_have_examples_to_run() -> None:
    """The parser finds the examples: the README's curl commands and the MCP example at least."""
    assert sum(block.path == "README.md" and block.kind == "sh" for block in BLOCKS) >= 2
    assert any(block.uses_mcp and block.kind == "python" for block in BLOCKS)

"""What a client sends names no series (issue 43, section 4).

compose's protocols service (gunicorn, two uvicorn workers: the Django site and ``/mcp``) on a
shared metrics directory gets a few hundred anonymous requests with random method names, random
paths and random MCP tool names. After one request of each kind has made the series it needs
(a method name that is no method is ``other``), the node has exactly the series it had: none
carries what the client sent. Before the fix each new method name made 19 series.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import httpx

from tests.metrics.scraping import Samples, parse
from tests.serving_commands import protocols_command, running, server_environment
from tests.support import free_port

MCP_HEADERS = {"accept": "application/json, text/event-stream"}
PATHS = ("/api/v1/agents", "/api/v1/tags", "/healthz", "/")


def _word(rng: random.Random, size: int) -> str:
    return "".join(rng.choices(string.ascii_uppercase, k=size))


def _series(samples: Samples) -> set[tuple[str, frozenset[tuple[str, str]]]]:
    """Every series of the node but the per-process gauges (``pid``: one per live worker)."""
    return {key for key in samples if not any(name == "pid" for name, _ in key[1])}


def _send(http: httpx.Client, rng: random.Random) -> list[str]:
    """One random request of each kind; the words it made up."""
    method, path, tool = _word(rng, 8), "/" + _word(rng, 10).lower(), _word(rng, 9).lower()
    http.request(method, rng.choice(PATHS))  # 405, 401, 400 or 404: what the view says
    http.request(rng.choice(("GET", "POST", method)), path)  # no such page
    call = {"name": tool, "arguments": {}}
    answer = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        headers=MCP_HEADERS,
    )
    assert answer.status_code == 200, answer.text[:300]
    return [method, path.strip("/"), tool]


def test_random_methods_paths_and_tools_add_no_series(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    port = free_port()
    env = server_environment(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(directory))
    rng = random.Random(43)
    with running(
        protocols_command(port), env, tmp_path / "server.log", port=port, booting="Booting worker"
    ):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as http:

            def scrape() -> Samples:
                response = http.get("/metrics")
                assert response.status_code == 200, response.text[:300]
                return parse(response.text)

            for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "NOPE"):
                for path in (*PATHS, "/no-such-page"):
                    http.request(method, path)
            for _ in range(3):  # each kind of answer once, on either worker
                _send(http, rng)
            scrape()  # a scrape is a request too: its own series are there from now on
            before = scrape()
            sent: list[str] = []
            for _ in range(150):  # 450 requests
                sent.extend(_send(http, rng))
            after = scrape()

    added = _series(after) - _series(before)
    assert not added, sorted(added)[:20]
    values = {value for _, labels in after for _, value in labels}
    assert not values & set(sent), sorted(values & set(sent))[:10]
    methods = {value for _, labels in after for name, value in labels if name == "method"}
    assert "other" in methods
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}

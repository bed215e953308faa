"""bench/live_tck_compare.py's own machinery: how registry rows and TCK records become comparable
verdicts, the broken-variant proxy on a real loopback agent, and the TCK plugin's fix for the
JSON-RPC client's slash (docs/live-checks.md, "Agreement with the A2A TCK")."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.live_tck_agents import CARD_PATH
from bench.live_tck_compare import declared, main, registry_verdicts
from bench.live_tck_faults import FAULTS, FaultProxy
from bench.live_tck_suites import fold_records

TASK_NOT_FOUND = {
    "code": -32001,
    "message": "Task not found",
    "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}],
}


class Agent:
    """A hand-made agent on 127.0.0.1: its card names its own origin; every JSON-RPC call is a
    TaskNotFoundError; ``GET /rest/tasks/x`` a 404 in the AIP-193 shape; it records paths and
    the A2A-Version header it was sent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, data: Any, **headers: str) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                owner.seen.append((self.path, self.headers.get("A2A-Version")))
                if self.path == CARD_PATH:
                    url = f"{owner.origin}/rpc"
                    card = {"supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC"}]}
                    self._reply(200, card, Cache_Control="max-age=60", ETag='"v1"')
                    return
                details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo"}]
                error = {"code": 404, "status": "NOT_FOUND", "message": "no", "details": details}
                self._reply(404, {"error": error})

            def do_POST(self) -> None:  # noqa: N802
                owner.seen.append((self.path, self.headers.get("A2A-Version")))
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = {"jsonrpc": "2.0", "id": request.get("id"), "error": TASK_NOT_FOUND}
                self._reply(200, answer)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def agent() -> Iterator[Agent]:
    served = Agent()
    yield served
    served.close()


def through(agent: Agent, fault_name: str) -> Iterator[FaultProxy]:
    proxy = FaultProxy(agent.origin, next(f for f in FAULTS if f.name == fault_name))
    try:
        yield proxy
    finally:
        proxy.close()


def get_task(origin: str, **headers: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}
    return httpx.post(origin + "/rpc", json=body, headers=headers).json()


def test_without_the_tck_checkouts_it_says_so_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--ext", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("skipped: no TCK checkout") and "tck-1.0" in out and "tck-0.3" in out


def test_the_proxy_serves_the_card_under_its_own_origin_and_passes_the_rest(agent: Agent) -> None:
    for proxy in through(agent, "send-fails"):  # a fault that leaves GetTask alone
        card = httpx.get(proxy.origin + CARD_PATH)
        assert card.json()["supportedInterfaces"][0]["url"] == proxy.origin + "/rpc"
        assert card.headers["Cache-Control"] == "max-age=60" and card.headers["ETag"] == '"v1"'
        assert get_task(proxy.origin) == get_task(agent.origin)


def test_each_fault_breaks_its_rule(agent: Agent) -> None:
    for proxy in through(agent, "not-found-as-internal"):
        assert get_task(proxy.origin)["error"]["code"] == -32603
        rest = httpx.get(proxy.origin + "/rest/tasks/x")
        assert rest.status_code == 500 and rest.json()["error"]["status"] == "INTERNAL"
    for proxy in through(agent, "no-error-info"):
        assert "data" not in get_task(proxy.origin)["error"]
        assert "details" not in httpx.get(proxy.origin + "/rest/tasks/x").json()["error"]
    for proxy in through(agent, "error-id-null"):
        assert get_task(proxy.origin)["id"] is None
    for proxy in through(agent, "rest-errors-not-aip193"):
        assert httpx.get(proxy.origin + "/rest/tasks/x").json() == {"message": "no"}
    for proxy in through(agent, "card-cache-without-max-age"):
        headers = httpx.get(proxy.origin + CARD_PATH).headers
        assert headers["Cache-Control"] == "no-store" and headers["ETag"] == '"proxy-card"'
    for proxy in through(agent, "version-ignored"):
        get_task(proxy.origin, **{"A2A-Version": "99.0"})
        get_task(proxy.origin, **{"A2A-Version": "0.3"})
    assert [version for _, version in agent.seen[-2:]] == ["1.0", "0.3"]


def test_the_large_answer_is_the_same_json_over_the_registry_limit(agent: Agent) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "CancelTask", "params": {"id": "x"}}
    for proxy in through(agent, "large-cancel-answer"):
        padded = httpx.post(proxy.origin + "/rpc", json=body)
        plain = httpx.post(agent.origin + "/rpc", json=body)
        assert len(padded.content) > 300 * 1024 > 256 * 1024
        assert padded.json() == plain.json()
        assert get_task(proxy.origin) == get_task(agent.origin)  # only CancelTask is padded


def test_registry_rows_are_keyed_by_tck_branch_id_and_binding() -> None:
    url = "http://a/rpc"
    card = {
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ]
    }

    def row(check: str, outcome: str, interface: str | None, request: str = "") -> dict[str, Any]:
        exchange = {"request": request} if request else None
        return {"id": check, "outcome": outcome, "interface": interface, "exchange": exchange}

    rows = [
        row("CORE-GET-002", "pass", url, 'POST http://a/rpc\n{"method": "GetTask"}'),
        row("REG-JSONRPC-METHOD", "pass", url, 'POST http://a/rpc\n{"method": "registry/no"}'),
        row("CORE-GET-002", "fail", url, 'POST http://a/rpc\n{"method": "tasks/get"}'),
        row("REG-JSONRPC-METHOD", "fail", url, 'POST http://a/rpc\n{"method": "registry/no"}'),
        row("CORE-GET-002", "warn", f"{url} (A2A 1.0)"),
        row("CORE-GET-002", "pass", "http://a/rest", "GET http://a/rest/tasks/x"),
        row("CARD-CACHE-001", "warn", None),
    ]
    verdicts = {
        key: outcome
        for key, (outcome, _) in registry_verdicts({"checks": rows}, declared(card)).items()
    }
    assert verdicts == {
        ("1.0", "CORE-GET-002", "JSONRPC"): "warn",  # the worst of pass and warn
        ("1.0", "REG-JSONRPC-METHOD", "JSONRPC"): "pass",  # its neighbour's version
        ("0.3", "CORE-GET-002", "JSONRPC"): "fail",
        ("0.3", "REG-JSONRPC-METHOD", "JSONRPC"): "fail",
        ("1.0", "CORE-GET-002", "HTTP+JSON"): "pass",
        ("1.0", "CARD-CACHE-001", "card"): "warn",
    }


def test_a_v0_3_card_is_read_from_url_and_additional_interfaces() -> None:
    card = {
        "url": "http://a/",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "http://a/rest", "transport": "HTTP+JSON"}],
    }
    assert declared(card) == [
        ("http://a/", "JSONRPC", "0.3"),
        ("http://a/rest", "HTTP+JSON", "0.3"),
    ]


def test_tck_records_fold_per_transport_and_a_skip_is_no_failure() -> None:
    def record(passed: bool, *errors: str, transport: str = "jsonrpc") -> dict[str, Any]:
        return {
            "requirement_id": "HTTP_JSON-ERR-001",
            "transport": transport,
            "passed": passed,
            "skipped": False,
            "errors": list(errors),
        }

    skip = "('/t.py', 506, 'Skipped: Server did not return a JSON-RPC error')"
    verdicts = fold_records(
        [
            record(False, "no error object"),  # an early failure, then a pass: still a failure
            record(True),
            record(False, skip, transport="http_json"),
            record(True, transport="http_json"),
            record(False, skip, transport="agent_card"),
        ]
    )
    assert verdicts[("1.0", "HTTP_JSON-ERR-001", "JSONRPC")] == ("fail", "no error object")
    assert verdicts[("1.0", "HTTP_JSON-ERR-001", "HTTP+JSON")] == ("pass", "")
    assert verdicts[("1.0", "HTTP_JSON-ERR-001", "card")] == ("skip", "")


STAND_IN = '''
import httpx


class JsonRpcClient:
    """As the TCK's 1.0-dev client builds its requests: a base URL, then a POST to "/"."""

    def __init__(self, base_url):
        self._client = httpx.Client(base_url=base_url)

    def call(self):
        return self._client.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})
'''


def test_the_plugin_sends_the_tck_client_to_the_declared_path(
    agent: Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "tck" / "transport"
    package.mkdir(parents=True)
    for directory in (tmp_path / "tck", package):
        (directory / "__init__.py").write_text("")
    (package / "jsonrpc_client.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("tck", "tck.transport", "tck.transport.jsonrpc_client"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    from tck.transport.jsonrpc_client import JsonRpcClient  # type: ignore[import-not-found]

    JsonRpcClient(agent.origin + "/a2a/jsonrpc").call()
    assert agent.seen[-1][0] == "/a2a/jsonrpc/"  # what the TCK sends by itself

    from bench import tck_live_plugin

    monkeypatch.delenv("TCK_JSONRPC_AS_IS", raising=False)
    tck_live_plugin.pytest_configure(None)
    JsonRpcClient(agent.origin + "/a2a/jsonrpc").call()
    JsonRpcClient(agent.origin).call()
    assert [path for path, _ in agent.seen[-2:]] == ["/a2a/jsonrpc", "/"]
    for name in ("tck", "tck.transport", "tck.transport.jsonrpc_client"):
        sys.modules.pop(name, None)

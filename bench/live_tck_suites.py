"""The A2A TCK's live suites as bench/live_tck_compare.py runs them: which tests, how each is
pointed at an agent, and how its results become (branch, id, binding) -> verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TESTS_1_0 = [
    "tests/compatibility/core_operations/test_requirements.py",
    "tests/compatibility/core_operations/test_error_handling.py",
    "tests/compatibility/http_json/test_problem_details.py",
    "tests/compatibility/jsonrpc/test_error_codes.py",
    "tests/compatibility/agent_card/test_agent_card_caching.py",
]
SELECT_1_0 = "not test_requirements or CORE-GET-002 or CORE-CANCEL-003 or CORE-SEND-001"
# 0.3.x test -> (registry id, bindings it speaks for). The JSON-RPC ones post to --sut-url.
TESTS_0_3 = {
    "tests/mandatory/protocol/test_tasks_get_method.py::test_tasks_get_nonexistent": (
        "CORE-GET-002",
        ("JSONRPC", "HTTP+JSON"),
    ),
    "tests/mandatory/protocol/test_tasks_cancel_method.py::test_tasks_cancel_nonexistent": (
        "CORE-CANCEL-003",
        ("JSONRPC", "HTTP+JSON"),
    ),
    "tests/mandatory/protocol/test_message_send_method.py::test_message_send_valid_text": (
        "CORE-SEND-001",
        ("JSONRPC", "HTTP+JSON"),
    ),
    "tests/mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_malformed_json": (
        "REG-JSONRPC-PARSE",
        ("JSONRPC",),
    ),
    "tests/mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_unknown_method": (
        "REG-JSONRPC-METHOD",
        ("JSONRPC",),
    ),
}
TRANSPORT_0_3 = {"JSONRPC": "jsonrpc", "HTTP+JSON": "rest"}
TRANSPORT_1_0 = {"jsonrpc": "JSONRPC", "http_json": "HTTP+JSON", "agent_card": "card"}

Key = tuple[str, str, str]  # (branch, id, binding)
Verdicts = dict[Key, tuple[str, str]]


def _pytest(python: str, checkout: Path, args: list[str], timeout: float, **extra: str) -> str:
    env = dict(os.environ, PYTHONPATH=f"{checkout}{os.pathsep}{ROOT / 'bench'}", **extra)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    for name in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)
    command = [python, "-m", "pytest", *args, "-q", "--tb=line", "-p", "no:cacheprovider"]
    try:
        done = subprocess.run(  # noqa: S603 - our own arguments
            command, cwd=checkout, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:g} s"
    return (done.stdout + done.stderr)[-2000:]


def tck_1_0(checkout: Path, origin: str, bindings: set[str]) -> Verdicts:
    """Per requirement and transport: fail if any of the TCK's records failed, pass if one
    passed and none failed, skip if all were skipped (its records, bench/tck_live_plugin.py)."""
    transports = [t for t, b in TRANSPORT_1_0.items() if b in bindings and t != "agent_card"]
    with tempfile.TemporaryDirectory() as scratch:
        records = Path(scratch) / "records.json"
        args = [*TESTS_1_0, "-k", SELECT_1_0, f"--sut-host={origin}"]
        args += [f"--transport={','.join(transports)}", "-p", "tck_live_plugin", "-o", "addopts="]
        log = _pytest(python_of(checkout), checkout, args, 600, TCK_RESULTS_JSON=str(records))
        if not records.exists():
            return {("1.0", "TCK-RUN", "agent"): ("error", log.strip().splitlines()[-1:][0])}
        results = json.loads(records.read_text())
    return fold_records(results)


def skipped(record: dict[str, Any]) -> bool:
    """A record the TCK's safety net wrote for a test that called ``pytest.skip`` itself: it
    records every call that did not pass as a failure, a skip's ``('file', line, 'Skipped:
    ...')`` included. A skip is not a verdict."""
    errors = record.get("errors") or []
    return bool(record["skipped"]) or (
        not record["passed"] and bool(errors) and all("Skipped: " in e for e in errors)
    )


def fold_records(results: list[dict[str, Any]]) -> Verdicts:
    """Per requirement and transport: fail if any record failed, pass if one passed and none
    failed, skip if every record was a skip."""
    grouped: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        binding = TRANSPORT_1_0.get(result["transport"])
        if binding:
            grouped[("1.0", result["requirement_id"], binding)].append(result)
    out: Verdicts = {}
    for key, group in grouped.items():
        failed = [r for r in group if not r["passed"] and not skipped(r)]
        if failed:
            errors = "; ".join(e for r in failed for e in r["errors"])
            out[key] = ("fail", errors.replace("\n", " ")[:160])
        elif any(r["passed"] for r in group):
            out[key] = ("pass", "")
        else:
            out[key] = ("skip", "")
    return out


def tck_0_3(checkout: Path, interfaces: list[tuple[str, str, str]]) -> Verdicts:
    out: Verdicts = {}
    for binding, transport in TRANSPORT_0_3.items():
        urls = [u for u, b, v in interfaces if b == binding and v == "0.3"]
        if not urls:
            continue
        tests = [t for t, (_, speaks) in TESTS_0_3.items() if binding in speaks]
        with tempfile.TemporaryDirectory() as scratch:
            junit = Path(scratch) / "junit.xml"
            args = [*tests, f"--sut-url={urls[0]}", f"--transport-strategy=prefer_{transport}"]
            args += [f"--transports={transport}", f"--junitxml={junit}", "-o", "addopts="]
            log = _pytest(python_of(checkout), checkout, args, 300)
            if not junit.exists():
                out[("0.3", "TCK-RUN", binding)] = ("error", log.strip().splitlines()[-1])
                continue
            for case in ElementTree.parse(junit).getroot().iter("testcase"):
                name = case.get("name", "")
                test = next((t for t in tests if t.endswith("::" + name)), None)
                if test is None:
                    continue
                failed = case.find("failure")
                if failed is None:
                    failed = case.find("error")
                skipped = case.find("skipped")
                if failed is not None:
                    verdict, detail = "fail", (failed.get("message") or "")[:160]
                elif skipped is not None:
                    verdict, detail = "skip", (skipped.get("message") or "")[:160]
                else:
                    verdict, detail = "pass", ""
                out[("0.3", TESTS_0_3[test][0], binding)] = (verdict, detail)
    return out


def python_of(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable

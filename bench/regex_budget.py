"""One regular-expression match against a live server (issue 35, item 1), and the worst single
match of a catalogue of hostile patterns at the registry's length caps.

    .venv/bin/python bench/regex_budget.py                      # the issue's reproduction
    .venv/bin/python bench/regex_budget.py --root /tmp/old-tree # the same server, older code
    .venv/bin/python bench/regex_budget.py --catalogue          # one match, in this process

1. The issue's reproduction: the web service as compose runs it (granian, RSGI, one worker,
   from ``--root``) on 127.0.0.1, the anonymous limit off; anonymous ``POST /api/v1/validate``
   with a card whose schema is ``{"properties": {"q": {"pattern": "(?=.*x)y"}}}`` and one skill
   example ``{"q": "a" * n}`` (n = 240,000: a 235 KiB card). Reports the server's CPU (user +
   system of granian and its worker, from /proc), the wall time, the status and the schema
   findings. One warm-up request first.
2. ``--catalogue``: each hostile pattern family (look-around nested, in repetitions, look-behind
   with counted repetitions, wide alternations, back-references, and heavy patterns on the linear
   engine) is sized at several counted repetitions, run on the longest text the registry allows
   it (``schemas_app.regex_cost.max_input``: characters on the backtracking engine, UTF-8 bytes
   on the linear one; 2.5 MB for patterns it does not limit), ASCII and 2- to 4-byte texts;
   prints the worst CPU of one match per family. The constants of
   ``schemas_app/regex_cost.py`` come from this.

Loopback only; the database is a dedicated one (registry_bench_regex) that ``/validate`` does not
write to.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    ROOT,
    bench_env,
    children_of,
    cpu_seconds,
    ensure_database,
    machine_summary,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_regex"
SCHEMAS_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)
LOOK = "(?=.*x)y"


def issue_card(length: int) -> dict[str, Any]:
    """The issue's card: the look-ahead schema as a skill's input, one example of ``length``."""
    example = json.dumps({"q": "a" * length})
    return {
        "name": "Long look", "description": "A look-ahead pattern.", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://look.example/a2a", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"extensions": [{"uri": SCHEMAS_URI}]},
        "schemas": {"q": {"properties": {"q": {"pattern": LOOK}}}},
        "defaultInputModes": ["application/json;schema=q"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "q", "name": "Q", "description": "Takes q.", "tags": ["q"],
                    "examples": [example]}],
    }  # fmt: skip


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def web(root: Path, database_url: str) -> Iterator[tuple[str, int]]:
    """granian serving ``root``'s registry.rsgi on a free loopback port: (base URL, its pid)."""
    env = bench_env(database_url, REGISTRY_ANON_RATE="off")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=root, env=env, check=True)  # fmt: skip
    port = _port()
    process = subprocess.Popen(
        [sys.executable, "-m", "granian", "--interface", "rsgi", "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1", "--no-ws", "--log-level", "warning",
         "registry.rsgi:application"],
        cwd=root, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not answer /healthz")
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(30)


def server_cpu(pid: int) -> float:
    tree = [pid, *children_of(pid)]
    for child in tree[1:]:
        tree.extend(children_of(child))
    return cpu_seconds(tree)


def reproduce(root: Path, database_url: str, lengths: list[int]) -> None:
    ensure_database(database_url)
    print(f"server from {root}")
    with web(root, database_url) as (base, pid), httpx.Client(timeout=600) as http:
        http.post(base + "/api/v1/validate", json={"card": issue_card(10)})  # warm-up
        print("n | card KiB | status | server CPU s | wall s | schema findings")
        for length in lengths:
            body = json.dumps({"card": issue_card(length)})
            before, started = server_cpu(pid), time.perf_counter()
            response = http.post(
                base + "/api/v1/validate",
                content=body,
                headers={"Content-Type": "application/json"},
            )
            wall, cpu = time.perf_counter() - started, server_cpu(pid) - before
            codes = []
            if response.status_code == 200:
                found = response.json()["validation"]["findings"]
                codes = [f["code"] for f in found if f["code"].startswith(("schema", "skill"))]
            kib = len(json.dumps(issue_card(length))) / 1024
            print(f"{length:,} | {kib:.0f} | {response.status_code} | {cpu:.2f} | {wall:.2f} | "
                  f"{', '.join(codes) or '-'}")  # fmt: skip


# --- one match, in this process ---------------------------------------------------------------

_ALTS = "|".join(f"{c}{d}?." for c in "abcdefghijklmnopqrstuvwxyz0123456789" for d in "ab")
FAMILIES: dict[str, Callable[[int], str]] = {
    "look-ahead": lambda k: LOOK,
    "look-ahead nested x2": lambda k: "(?=.*(?=.*x))y",
    "look-ahead nested x3": lambda k: "(?=.*(?=.*(?=.*x)))y",
    "two look-aheads nested": lambda k: "(?=.*(?=.*x)(?=.*z))y",
    "look-behind": lambda k: "(?<=.*a)x",
    "look-behind counted": lambda k: f"(?<=a.{{{k}}}b.*)y",
    "look-behind in a repetition": lambda k: f"(?:(?<=a.{{{k}}}b.*).)*y",
    "look-behind, repetitions nested": lambda k: "(?:(?:(?<=a.*).)*.)*y",
    "look-behind in a look-ahead": lambda k: "(?=.*(?<=a.*)x)y",
    "look-ahead counted": lambda k: f"(?=.*a.{{{k}}}x)y",
    "look-ahead counted, nested": lambda k: f"(?=.*(?=.*a.{{{k}}}x))y",
    "look-behind, wide alternation": lambda k: f"(?<=(?:{_ALTS}){{{max(1, k // 8)}}}b.*)y",
    "look-ahead, wide alternation": lambda k: f"(?=.*(?:{_ALTS}){{{max(1, k // 8)}}}x)y",
    "back-references": lambda k: r"(.*)(.*)\2\1x",
    "issue 17 bomb": lambda k: "^(a|aa)+(?=c)$",
    "linear, counted": lambda k: f"a.{{{k}}}x",
    "linear, choice then counted": lambda k: f"(?:a|b).{{{k}}}x",
    "linear, class then counted": lambda k: f"[ab].{{{k}}}x",
}
REPEATS = (1, 4, 10, 16, 64, 200, 1000, 4000)
LARGEST = 2_500_000  # bytes of the largest body a server takes (/validate)


def texts(size: int, unit: str) -> list[str]:
    """Hostile texts of ``size`` characters, or of ``size`` bytes of UTF-8."""
    rnd = random.Random(7)
    out = []
    for alphabet in ("a", "ab", "abxyz", "a\u00e9\u4e2d\U0001f600"):
        chars, used = [], 0
        while True:
            char = rnd.choice(alphabet)
            used += len(char.encode()) if unit == "bytes" else 1
            if used > size:
                break
            chars.append(char)
        out.append("".join(chars))
    return out


def catalogue(database_url: str) -> None:
    setup_django(database_url)
    import jsonschema_rs

    from schemas_app import regex_cost
    from schemas_app.validation import pattern_options

    options = pattern_options()
    print(f"allowance of one match: {regex_cost.allowance_ns() / 1e6:.1f} ms (estimated)")
    print("family | worst ms | at length | weight | {k}")
    worst_all = 0.0
    for name, family in FAMILIES.items():
        worst = (0.0, 0, 0, 0)
        for k in REPEATS:
            pattern = family(k)
            length = regex_cost.max_input(pattern)
            length = LARGEST if length is None else length
            unit = "characters" if regex_cost.needs_backtracking(pattern) else "bytes"
            try:
                validator = jsonschema_rs.Draft202012Validator(
                    {"pattern": pattern}, offline=True, pattern_options=options
                )
            except Exception:  # noqa: BLE001 - beyond the regex crate's size limit: no match
                continue
            for text in texts(length, unit):
                started = time.thread_time()
                validator.is_valid(text)
                spent = (time.thread_time() - started) * 1000
                if spent > worst[0]:
                    worst = (spent, length, regex_cost.weight(pattern), k)
        worst_all = max(worst_all, worst[0])
        print(f"{name} | {worst[0]:.2f} | {worst[1]:,} | {worst[2]:,} | {worst[3]}")
    print(f"worst single match: {worst_all:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree the server runs from")
    parser.add_argument("--lengths", default="240000", help="example lengths, comma-separated")
    parser.add_argument("--catalogue", action="store_true", help="one match per hostile family")
    args = parser.parse_args()
    print(machine_summary())
    if args.catalogue:
        catalogue(args.database_url)
        return
    reproduce(args.root.resolve(), args.database_url, [int(n) for n in args.lengths.split(",")])


if __name__ == "__main__":
    main()

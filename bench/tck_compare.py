"""Compare the registry's card verdicts with the A2A TCK's agent-card tests, card by card.

Each corpus card's exact bytes are served at ``/.well-known/agent-card.json`` on a loopback
server; the TCK's own card tests run against it (version-matched, see ``tck_branch``), and
``cards.pipeline.run`` judges the same bytes with the production fetch policy (no http, no
private networks). Both verdicts are "valid" or "invalid"; the script prints the agreement
table and every disagreement with the registry's error findings and the TCK's failures.

    python bench/tck_compare.py --tck-1-0 /tmp/tck-1.0 --tck-0-3 /tmp/tck-0.3

The TCK is not part of this repository (never commit it): check out its branches yourself,
e.g. ``git clone -b 1.0-dev https://github.com/a2aproject/a2a-tck /tmp/tck-1.0`` and
``git clone -b 0.3.x ... /tmp/tck-0.3``, and give a Python that has the TCK's dependencies
(``--tck-python``; default: the checkout's ``.venv/bin/python``, else this interpreter).
Without the checkouts the script says so and exits 0 (nothing to compare).

Which tests count (the card tests of each branch, nothing that needs a live agent):
  1.0-dev: tests/compatibility/agent_card/test_agent_card.py (CARD-DISC-001, CARD-STRUCT-001,
           CARD-PROTO-001/002, BIND-FIELD-001; all MUST). The caching tests judge our test
           server's headers, not the card, and are left out.
  0.3.x:   tests/mandatory/protocol/test_agent_card.py and test_agent_card_mandatory.py.
A card is TCK-valid when pytest exits 0 (every test passed or skipped); pytest runs with -x,
so a TCK-invalid card shows its first failure.

Version matching: a top-level ``protocolVersion`` N.N(.N) decides (major 0 -> 0.3.x, else
1.0-dev); without one, a card with ``supportedInterfaces`` goes to 1.0-dev and any other to
0.3.x. See docs/validation-rules.md ("Agreement with the A2A TCK").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "cards"
WELL_KNOWN = "/.well-known/agent-card.json"
TESTS = {
    "1.0": ["tests/compatibility/agent_card/test_agent_card.py"],
    "0.3": [
        "tests/mandatory/protocol/test_agent_card.py",
        "tests/mandatory/protocol/test_agent_card_mandatory.py",
    ],
}
_VERSION = re.compile(r"^(\d+)\.\d+(?:\.\d+)?$")


def tck_branch(raw: bytes) -> str:
    """ "1.0" or "0.3": the TCK branch a card is compared with (see the module docstring)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return "1.0"
    if not isinstance(data, dict):
        return "1.0"
    declared = data.get("protocolVersion")
    match = _VERSION.match(declared) if isinstance(declared, str) else None
    if match:
        return "0.3" if match.group(1) == "0" else "1.0"
    return "1.0" if "supportedInterfaces" in data else "0.3"


class _CardServer:
    """Serves one document's exact bytes at the well-known path on 127.0.0.1."""

    def __init__(self) -> None:
        self.body = b""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                if self.path.split("?", 1)[0] != WELL_KNOWN:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Row:
    card: str
    branch: str
    tck_valid: bool | None  # None: the TCK run itself broke
    ours_valid: bool
    tck_failures: list[str] = field(default_factory=list)
    our_errors: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return self.tck_valid is not None and self.tck_valid == self.ours_valid


_FAILED = re.compile(r"^(FAILED|ERROR) (tests/\S+)(?: - (.*))?$")
_REASON = re.compile(r"^E +\w*(Error|Exception|Failed)\b")


def run_tck(python: str, checkout: Path, branch: str, origin: str) -> tuple[bool | None, list[str]]:
    option = ["--sut-host", origin] if branch == "1.0" else ["--sut-url", origin + "/"]
    command = [
        python,
        "-m",
        "pytest",
        *TESTS[branch],
        *option,
        "-q",
        "-x",  # one failure decides; the 0.3.x fixtures retry for minutes after a failed fetch
        "-rfE",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
    ]
    env = dict(os.environ, PYTHONPATH=str(checkout), NO_PROXY="127.0.0.1,localhost")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    try:
        done = subprocess.run(  # noqa: S603 - our own arguments
            command, cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False
        )
    except subprocess.TimeoutExpired:
        return None, ["the TCK run timed out (120 s)"]
    lines = done.stdout.splitlines()
    tests = [m.group(2).rsplit("::", 1)[-1] for m in map(_FAILED.match, lines) if m]
    reasons = [line[1:].strip() for line in lines if _REASON.match(line)]
    failures = [
        f"{test}: {reasons[i][:200] if i < len(reasons) else ''}" for i, test in enumerate(tests)
    ]
    if done.returncode == 0:
        return True, failures
    if done.returncode == 1:
        return False, failures
    tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
    return None, [f"pytest exited {done.returncode}: {' | '.join(tail)}"]


def our_verdict(raw: bytes, url: str) -> tuple[bool, list[str]]:
    from cards.pipeline import run

    report = run(raw, card_url=url)
    errors = [f"{f.code} {f.pointer}".strip() for f in report.findings if f.severity == "error"]
    return report.valid, errors


def setup_django() -> None:
    """Settings as in production for the verdict: https only, no private networks exempt."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "tck-compare-only-secret")
    os.environ["REGISTRY_FETCH_ALLOW_HTTP"] = "false"
    os.environ["REGISTRY_FETCH_ALLOWED_NETWORKS"] = ""
    import django

    django.setup()


def default_python(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def compare(args: argparse.Namespace) -> list[Row]:
    checkouts = {"1.0": Path(args.tck_1_0), "0.3": Path(args.tck_0_3)}
    pythons = {
        branch: args.tck_python or default_python(path) for branch, path in checkouts.items()
    }
    server = _CardServer()
    rows = []
    try:
        for path in sorted(Path(args.cards).glob("*.json")):
            raw = path.read_bytes()
            server.body = raw
            branch = tck_branch(raw)
            tck_valid, failures = run_tck(pythons[branch], checkouts[branch], branch, server.origin)
            ours_valid, errors = our_verdict(raw, server.origin + WELL_KNOWN)
            rows.append(Row(path.name, branch, tck_valid, ours_valid, failures, errors))
            if args.verbose:
                print(f"{path.name[:3]} {branch} tck={tck_valid} ours={ours_valid}", flush=True)
    finally:
        server.close()
    return rows


def _agreement(rows: list[Row]) -> str:
    agreed = sum(row.agree for row in rows)
    share = 100 * agreed / len(rows) if rows else 0.0
    return f"{agreed}/{len(rows)} ({share:.1f}%)"


def report(rows: list[Row], split: set[str]) -> None:
    verdict = {True: "valid", False: "invalid", None: "TCK error"}
    print("\nAgreement with the A2A TCK (version-matched)\n")
    print("| TCK \\ registry | valid | invalid |")
    print("|---|---|---|")
    for tck in (True, False, None):
        cells = [
            sum(r.tck_valid is tck and r.ours_valid is ours for r in rows) for ours in (True, False)
        ]
        if tck is not None or any(cells):
            print(f"| {verdict[tck]} | {cells[0]} | {cells[1]} |")
    print(f"\nall cards: {_agreement(rows)}")
    for branch in ("1.0", "0.3"):
        subset = [r for r in rows if r.branch == branch]
        print(f"  TCK {branch}: {_agreement(subset)}")
    if split:
        inside = [r for r in rows if r.card[:3] in split]
        outside = [r for r in rows if r.card[:3] not in split]
        print(f"  listed in --split: {_agreement(inside)}; the others: {_agreement(outside)}")
    disagreements = [r for r in rows if not r.agree]
    print(f"\n{len(disagreements)} disagreements\n")
    for row in disagreements:
        print(
            f"{row.card} (TCK {row.branch}): TCK {verdict[row.tck_valid]}, registry "
            f"{verdict[row.ours_valid]}"
        )
        for failure in row.tck_failures:
            print(f"    TCK: {failure}")
        for error in row.our_errors[:8]:
            print(f"    registry: {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tck-1-0", help="a checkout of a2a-tck branch 1.0-dev")
    parser.add_argument("--tck-0-3", help="a checkout of a2a-tck branch 0.3.x")
    parser.add_argument("--tck-python", help="a Python with the TCK's dependencies")
    parser.add_argument("--cards", default=str(DEFAULT_CORPUS), help="a directory of *.json cards")
    parser.add_argument("--split", default="", help="card numbers (001,057,...) to report apart")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    missing = [
        name
        for name, value in (("--tck-1-0", args.tck_1_0), ("--tck-0-3", args.tck_0_3))
        if not value or not Path(value, "tests").is_dir()
    ]
    if missing:
        names = ", ".join(missing)
        print(f"skipped: no TCK checkout given or found for {names}; see the docstring")
        return 0
    if not Path(args.cards).is_dir():
        print(f"skipped: no corpus at {args.cards}")
        return 0
    setup_django()
    rows = compare(args)
    report(rows, {number.strip() for number in args.split.split(",") if number.strip()})
    if args.json:
        Path(args.json).write_text(json.dumps([row.__dict__ for row in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

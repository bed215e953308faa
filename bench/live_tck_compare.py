"""Compare the registry's live checks with the A2A TCK's live tests, agent by agent and id by id.

    .venv/bin/python bench/live_tck_compare.py --ext /work/ext --database-url $MYDB \
        --redis-url $MYREDIS [--only NAME] [--no-broken | --broken-only] [--tck-as-is] \
        [--json out.json]

The checkouts, their venvs and the figures: docs/live-checks.md, "Agreement with the A2A TCK".

Each agent (bench/live_tck_agents.py: real agents nobody here wrote, from checkouts under
``--ext``) is started on 127.0.0.1. The registry judges it through its real code: an Agent row
for the agent's own well-known card URL, the real crawl (``cards.crawling.agent_crawl``, http and
loopback allowed), then ``live.runner.check_agent`` with ``probe_messages`` on. The TCK judges
it through its own live tests, version-matched:

- 1.0-dev, for interfaces declaring protocolVersion 1.x: ``tests/compatibility/`` modules
  ``core_operations/test_requirements.py`` (only CORE-GET-002, CORE-CANCEL-003, CORE-SEND-001),
  ``core_operations/test_error_handling.py``, ``http_json/test_problem_details.py``,
  ``jsonrpc/test_error_codes.py`` and ``agent_card/test_agent_card_caching.py``, on the
  transports jsonrpc and http_json. The plugin bench/tck_live_plugin.py (``-p``) makes its
  JSON-RPC client post to the interface URL the card declares (it posts to ``<url>/``) and
  writes the TCK's own records, read per requirement id and transport (fail if any failed).
- 0.3.x, for interfaces declaring 0.x: five tests of ``tests/mandatory/`` (``TESTS_0_3``),
  once per binding (``--transports jsonrpc`` / ``rest``), mapped to the registry's ids.

A row is (agent, TCK branch, id, binding). Verdicts are pass or fail (a registry ``warn`` is a
SHOULD not met: the TCK's SHOULD tests fail then), or skip / "-" (not run); a row is decided
when both sides said pass or fail. Then the same for broken variants (bench/live_tck_faults.py:
a proxy in front of a2a-python's sample that breaks one rule each), reported apart.

Without the TCK checkouts the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.live_tck_agents import CARD_PATH, Running, agents, git_head  # noqa: E402
from bench.live_tck_faults import FAULTS, FaultProxy  # noqa: E402
from bench.live_tck_suites import TESTS_0_3, Key, tck_0_3, tck_1_0  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_live_tck"
_RANK = {"fail": 3, "warn": 2, "pass": 1, "skip": 0}
_LABEL = re.compile(r"^(.*) \(A2A (\d+\.\d+)\)$")
_METHOD = re.compile(r'"method"\s*:\s*"([^"]*)')


def declared(card: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(url, binding, branch) of each interface: supportedInterfaces, else a v0.3 card's."""
    out = []
    for item in card.get("supportedInterfaces") or []:
        version = str(item.get("protocolVersion") or "1.0")
        out.append((item.get("url", ""), item.get("protocolBinding", ""), branch_of(version)))
    if not out and isinstance(card.get("url"), str):
        out.append((card["url"], card.get("preferredTransport") or "JSONRPC", "0.3"))
        for item in card.get("additionalInterfaces") or []:
            out.append((item.get("url", ""), item.get("transport", ""), "0.3"))
    return out


def branch_of(version: str) -> str:
    return "0.3" if version.startswith("0.") else "1.0"


def _hint(row: dict[str, Any], url: str, binding: str) -> str | None:
    """The version a row's own request shows: v0.3 method names have a slash, v1.0 ones are
    PascalCase; v0.3 HTTP+JSON paths start with /v1/."""
    request = (row.get("exchange") or {}).get("request") or ""
    if binding == "JSONRPC":
        match = _METHOD.search(request)
        if not match or match.group(1).startswith("registry/"):
            return None
        return "0.3" if "/" in match.group(1) else "1.0"
    line = request.split("\n", 1)[0]
    if url and url in line:
        return "0.3" if line.split(url, 1)[1].startswith("/v1/") else "1.0"
    return None


def registry_verdicts(
    report: dict[str, Any], interfaces: list[tuple[str, str, str]]
) -> dict[Key, tuple[str, str]]:
    """(branch, id, binding) -> (worst outcome, its detail) over the report's rows."""
    keyed: list[tuple[dict[str, Any], str | None, str]] = []
    for row in report.get("checks") or []:
        url = row.get("interface")
        if url is None:
            binding = "card" if row["id"].startswith("CARD-") else "agent"
            keyed.append((row, "1.0", binding))
            continue
        labelled = _LABEL.match(url)  # "URL (A2A 0.3)": one URL declared with two versions
        if labelled:
            url = labelled.group(1)
        candidates = [(b, v) for u, b, v in interfaces if u == url]
        bindings = {b for b, _ in candidates} or {"?"}
        binding = sorted(bindings)[0]
        versions = {v for b, v in candidates if b == binding}
        if labelled:
            versions = {branch_of(labelled.group(2))}
        version = versions.pop() if len(versions) == 1 else _hint(row, url, binding)
        keyed.append((row, version, binding))
    # A row whose version its request does not show: that of its neighbour on the same URL
    # (the runner checks one interface after the other).
    for index, (row, version, binding) in enumerate(keyed):
        if version is None:
            same = [k for k in keyed[:index][::-1] + keyed[index + 1 :] if k[0].get("interface")]
            near = [v for r, v, _ in same if r.get("interface") == row.get("interface") and v]
            keyed[index] = (row, near[0] if near else "1.0", binding)
    verdicts: dict[Key, tuple[str, str]] = {}
    for row, version, binding in keyed:
        key = (version or "1.0", row["id"], binding)
        old = verdicts.get(key)
        if old is None or _RANK.get(row["outcome"], 0) > _RANK.get(old[0], 0):
            verdicts[key] = (row["outcome"], (row.get("detail") or "")[:160])
    return verdicts


def registry_report(card_url: str) -> dict[str, Any]:
    from cards import crawling
    from cards.models import Agent
    from live import runner

    Agent.objects.filter(card_url=card_url).delete()
    row = Agent.objects.create(url=card_url, card_url=card_url, probe_messages=True)
    outcome = crawling.agent_crawl(agent_id=row.pk)
    if outcome not in ("stored", "unchanged"):
        error = Agent.objects.get(pk=row.pk).last_error
        return {"checks": [], "error": f"crawl: {outcome} {error}"}
    target = runner.target(row.pk)
    assert target is not None
    return runner.check_agent(target, force=True)


def compare(label: str, group: str, origin: str, args: argparse.Namespace) -> dict[str, Any]:
    card = httpx.get(origin + CARD_PATH, timeout=10).json()
    interfaces = declared(card)
    report = registry_report(origin + CARD_PATH)
    ours = registry_verdicts(report, interfaces)
    theirs: dict[Key, tuple[str, str]] = {}
    bindings_1_0 = {b for _, b, v in interfaces if v == "1.0"}
    if bindings_1_0 & {"JSONRPC", "HTTP+JSON"}:
        theirs.update(tck_1_0(Path(args.tck_1_0), origin, bindings_1_0))
    theirs.update(tck_0_3(Path(args.tck_0_3), interfaces))
    from live.transport_checks import TITLES

    # The ids the registry checks (also where it checked nothing: an agent it did not call).
    known = {key[1] for key in ours} | set(TITLES) | {"CORE-SEND-001", "TCK-RUN"}
    known |= {check_id for check_id, _ in TESTS_0_3.values()}
    rows = []
    for key in sorted(set(ours) | {k for k in theirs if k[1] in known}):
        mine, tck = ours.get(key, ("-", "")), theirs.get(key, ("-", ""))
        if mine[0] == "-" and tck[0] in ("-", "skip"):
            continue  # a binding or test neither side ran
        rows.append(
            {
                "branch": key[0],
                "id": key[1],
                "binding": key[2],
                "registry": mine[0],
                "registry_detail": mine[1],
                "tck": tck[0],
                "tck_detail": tck[1],
            }
        )
    return {"agent": label, "group": group, "rows": rows, "error": report.get("error")}


def _verdict(outcome: str) -> str:
    return {"warn": "fail"}.get(outcome, outcome)


def decided(row: dict[str, Any]) -> bool:
    return _verdict(row["registry"]) in ("pass", "fail") and row["tck"] in ("pass", "fail")


def agrees(row: dict[str, Any]) -> bool:
    return _verdict(row["registry"]) == row["tck"]


def print_tables(results: list[dict[str, Any]]) -> None:
    for result in results:
        print(f"\n### {result['agent']} ({result['group']})\n")
        if result.get("error"):
            print(f"registry: {result['error']}\n")
        print("| TCK | id | binding | registry | TCK verdict | |")
        print("|---|---|---|---|---|---|")
        for row in result["rows"]:
            if row["tck"] == "-":
                continue  # the registry's alone: listed below the table
            mark = ("agree" if agrees(row) else "**disagree**") if decided(row) else "-"
            print(
                f"| {row['branch']} | {row['id']} | {row['binding']} | {row['registry']} | "
                f"{row['tck']} | {mark} |"
            )
        alone = [
            f"{r['id']} {r['binding']} {r['registry']}" for r in result["rows"] if r["tck"] == "-"
        ]
        print(f"\nno TCK test (registry only): {', '.join(alone) or 'none'}")
    print(
        "\n| set | agents | decided rows | agree | registry fail, TCK pass | registry pass, "
        "TCK fail | TCK only | registry only |"
    )
    print("|---|---|---|---|---|---|---|---|")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        groups[result["group"]].append(result)
    for group, members in groups.items():
        every = [row for result in members for row in result["rows"]]
        rows = [row for row in every if decided(row)]
        alarms = sum(_verdict(r["registry"]) == "fail" and r["tck"] == "pass" for r in rows)
        misses = sum(_verdict(r["registry"]) == "pass" and r["tck"] == "fail" for r in rows)
        agreed = sum(agrees(r) for r in rows)
        said = ("pass", "fail")
        tck_only = sum(r["tck"] in said and _verdict(r["registry"]) not in said for r in every)
        ours_only = sum(_verdict(r["registry"]) in said and r["tck"] not in said for r in every)
        print(
            f"| {group} | {len(members)} | {len(rows)} | {agreed} | {alarms} | {misses} | "
            f"{tck_only} | {ours_only} |"
        )
    faults = [result for result in results if result.get("expected")]
    if faults:
        print("\n| broken variant | id | should | registry (any binding) | TCK (any binding) |")
        print("|---|---|---|---|---|")
        for result in faults:
            for check_id, said in result["expected"].items():
                print(
                    f"| {result['agent'].split(':')[0]} | {check_id} | {said['should']} | "
                    f"{said['registry']} | {said['tck']} |"
                )
    disagreements = [
        (result["agent"], row)
        for result in results
        for row in result["rows"]
        if decided(row) and not agrees(row)
    ]
    print(f"\n{len(disagreements)} disagreements\n")
    for agent, row in disagreements:
        print(
            f"- {agent}: TCK {row['branch']} {row['id']} {row['binding']}: registry "
            f"{row['registry']} ({row['registry_detail']}); TCK {row['tck']} "
            f"({row['tck_detail']})"
        )


def broken(args: argparse.Namespace, log_dir: Path) -> list[dict[str, Any]]:
    spec = next(a for a in agents(Path(args.ext)) if a.name.startswith("a2a-python sample"))
    results = []
    agent = Running(spec, log_dir)
    try:
        for fault in FAULTS:
            if args.only and args.only not in fault.name:
                continue
            proxy = FaultProxy(agent.origin, fault)
            try:
                result = compare(f"{fault.name}: {fault.what}", "broken", proxy.origin, args)
            finally:
                proxy.close()
            result["expected"] = {
                expected: {
                    "should": "fail" if expected in fault.expected else "not fail",
                    **{
                        side: "/".join(
                            sorted({r[side] for r in result["rows"] if r["id"] == expected})
                        )
                        or "-"
                        for side in ("registry", "tck")
                    },
                }
                for expected in (*fault.expected, *fault.spared)
            }
            limits = [r for r in result["rows"] if r["id"].startswith("REG-TOO-")]
            for row in limits:
                result["expected"][row["id"]] = {
                    "should": "skip",
                    "registry": row["registry"],
                    "tck": "-",
                }
            results.append(result)
            print(f"done: {fault.name}", flush=True)
    finally:
        agent.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ext", default="/work/ext", help="the checkouts and their venvs")
    parser.add_argument("--tck-1-0", help="a2a-tck at 1.0-dev (default: EXT/tck-1.0)")
    parser.add_argument("--tck-0-3", help="a2a-tck at 0.3.x (default: EXT/tck-0.3)")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument(
        "--only", help="run only the agents (or broken variants) whose name contains this"
    )
    parser.add_argument("--no-broken", action="store_true", help="leave out the broken variants")
    parser.add_argument("--broken-only", action="store_true", help="only the broken variants")
    parser.add_argument(
        "--tck-as-is",
        action="store_true",
        help="let the 1.0-dev TCK post to <interface url>/ as it does (to measure the slash)",
    )
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    ext = Path(args.ext)
    args.tck_1_0 = args.tck_1_0 or str(ext / "tck-1.0")
    args.tck_0_3 = args.tck_0_3 or str(ext / "tck-0.3")
    missing = [p for p in (args.tck_1_0, args.tck_0_3) if not Path(p, "tests").is_dir()]
    if missing:
        print(f"skipped: no TCK checkout at {', '.join(missing)}; see the docstring")
        return 0
    setup(args)
    if args.tck_as_is:
        os.environ["TCK_JSONRPC_AS_IS"] = "1"
    log_dir = Path(tempfile.mkdtemp(prefix="live-tck-"))
    print(
        f"TCK 1.0-dev {git_head(Path(args.tck_1_0))}, 0.3.x {git_head(Path(args.tck_0_3))}; "
        f"agents' logs in {log_dir}",
        flush=True,
    )
    results = []
    for spec in agents(ext):
        if args.broken_only or (args.only and args.only not in spec.name):
            continue
        absent = [str(p) for p in spec.needs if not p.exists()]
        if absent:
            print(f"not run: {spec.name}: missing {', '.join(absent)}", flush=True)
            continue
        try:
            agent = Running(spec, log_dir)
        except RuntimeError as error:
            print(f"not run: {spec.name}: {error}", flush=True)
            continue
        try:
            results.append(compare(f"{spec.name} [{spec.source}]", spec.group, agent.origin, args))
        finally:
            agent.stop()
        print(f"done: {spec.name}", flush=True)
    if not args.no_broken and (not args.only or any(args.only in f.name for f in FAULTS)):
        results += broken(args, log_dir)
    print_tables(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


def setup(args: argparse.Namespace) -> None:
    """The registry as deployed, but allowed to fetch http on loopback, with no politeness gap
    or hourly ceiling (every agent here is one address) and a message budget for re-runs."""
    from bench._common import ensure_database, loopback_agents, setup_django

    ensure_database(args.database_url)
    setup_django(
        args.database_url,
        **loopback_agents(
            args.redis_url,
            CELERY_TASK_ALWAYS_EAGER="true",
            REGISTRY_LIVE_MESSAGES_PER_DAY="1000",
            REGISTRY_ORIGIN_MIN_GAP_SECONDS="0",
            REGISTRY_DESTINATION_MIN_GAP_SECONDS="0",
            REGISTRY_DESTINATION_HOURLY_LIMIT="0",
        ),
    )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from cards.models import Agent

    Agent.objects.filter(url__startswith="http://127.0.0.1:").delete()  # an earlier run's


if __name__ == "__main__":
    raise SystemExit(main())

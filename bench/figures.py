"""The figures docs/deploy.md and docs/benchmarks.md quote, measured again in one run.

One command prints the tables those documents hold, in their shape, headed by the machine they
were measured on (CPU model and its vector extensions, cores, memory, kernel, the load before and
after, the versions of Python, PostgreSQL, Redis and granian, the commit):

- web cores per door at 10,000 agents (``bench/door_load.py``: REST by id and lists, search by
  meaning, A2A, the catalogue's pages, badges, attestations, MCP under ASGI);
- the same for fetch by id and search by meaning at 100,000 agents;
- side by side with the peer (``bench/peer_compare.py``: fetch by id, first page, a tag, the deep
  page and the framework floor, with each server's CPU a request) at 10,000 and 100,000 agents,
  when ``--peer-git-dir`` is given.

The databases are built beforehand (docs/benchmarks.md, "Current figures": ``bench/seed.py``,
``bench/semantic_load.py --ingest-only``, ``bench/borrow_vectors.py``); this script only reads
them. Each part runs the script that measures it as a separate process, one after the other,
and the tables are printed as they come and again together at the end (``--out`` writes them to
a file too). Figures from a machine with other load are not comparable: the header says how
busy the machine was, and the scripts wait for it to be quiet before each measurement.

Example (about 25 minutes)::

    .venv/bin/python bench/figures.py \\
        --db10k postgres://postgres@127.0.0.1:5432/reg_bench_me10k \\
        --db100k postgres://postgres@127.0.0.1:5432/reg_bench_me100k \\
        --peer-git-dir /work/.mirror/prassanna-ravishankar+a2a-registry/repo \\
        --peer-venv /tmp/peervenv --out /tmp/figures.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))

from bench._common import check_loopback, machine_summary  # noqa: E402

PEER_QUERIES = "by-id,first-page,tag,deep-page,floor"


def _first(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else "?"


def _extensions() -> str:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        return "?"
    if "avx512f" in flags:
        return "AVX-512" + (" VNNI" if "avx512_vnni" in flags else "")
    return "AVX2" if "avx2" in flags else "no AVX2"


def _postgresql(database_url: str) -> str:
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]).split()[0] if row else "?"


def _redis(redis_url: str) -> str:
    import redis

    info: Any = redis.Redis.from_url(redis_url, socket_timeout=2).info("server")
    return str(info.get("redis_version", "?"))


def machine(args: argparse.Namespace) -> dict[str, str]:
    """What the figures were measured on."""
    facts = machine_summary()
    load = os.getloadavg()
    granian = _first([str(Path(PYTHON).parent / "granian"), "--version"])
    return {
        "cpu": f"{facts.get('cpu', '?')} ({_extensions()})",
        "cores": facts.get("nproc", "?"),
        "memory": facts.get("memory", "?"),
        "kernel": platform.release(),
        "python": facts.get("python", "?"),
        "postgresql": _postgresql(args.db10k),
        "redis": _redis(args.redis_url),
        "granian": granian.replace("granian", "").strip(),
        "commit": _first(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load": f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
    }


def header(facts: dict[str, str], end_load: str) -> str:
    return (
        f"Machine: {facts['cpu']}, {facts['cores']} cores, {facts['memory']}, Linux "
        f"{facts['kernel']}; Python {facts['python']}, PostgreSQL {facts['postgresql']}, Redis "
        f"{facts['redis']}, granian {facts['granian']}; commit `{facts['commit']}`, "
        f"{facts['date']}. Load average (1, 5, 15 min) {facts['load']} before, {end_load} after."
    )


def run(command: list[str]) -> list[str]:
    """``command``'s output lines, echoed as they come; a failure stops the whole run."""
    print("$ " + " ".join(command), flush=True)
    lines = []
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("WARNING: Location"):  # pip's noise while building the peer
                continue
            print("  " + line.rstrip(), flush=True)
            lines.append(line.rstrip())
    if process.returncode:
        raise SystemExit(f"{command[1]} failed ({process.returncode})")
    return lines


def door_table(args: argparse.Namespace, database: str, agents: str, only: str = "") -> str:
    command = [PYTHON, "bench/door_load.py", "--database-url", database,
               "--redis-url", args.redis_url, "--runs", str(args.runs),
               "--duration", str(args.duration)]  # fmt: skip
    if only:
        command += ["--only", only]
    lines = run(command)
    rows: list[dict[str, Any]] = json.loads(lines[-1])
    out = [
        f"| {agents} agents: door | req/s | p50 ms | p99 ms | server CPU ms a request "
        "| per web core | PostgreSQL CPU ms | non-2xx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        out.append(
            f"| {row['door']} | {row['rate']:,.0f} | {row['p50']:.1f} | {row['p99']:.1f} "
            f"| {row['server_ms']:.2f} | {1000 / row['server_ms']:,.0f} "
            f"| {row['postgres_ms']:.2f} | {row['errors']} |"
        )
    return "\n".join(out)


def peer_table(args: argparse.Namespace, agents: int, ours: str, peer: str) -> str:
    command = [PYTHON, "bench/peer_compare.py", "--peer-git-dir", args.peer_git_dir,
               "--peer-venv", args.peer_venv, "--agents", str(agents), "--ours-db", ours,
               "--peer-db", peer, "--redis-url", args.redis_url, "--queries", PEER_QUERIES,
               "--warmup", "3", "--duration", str(args.peer_duration),
               "--passes", str(args.passes)]  # fmt: skip
    lines = run(command)
    start = max(i for i, line in enumerate(lines) if line.startswith(f"| {agents:,} agents"))
    table = [line for line in lines[start:] if line.startswith("|")]
    return "\n".join(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db10k", required=True, help="10,000 agents, embedded")
    parser.add_argument("--db100k", help="100,000 agents, embedded (vectors borrowed)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--peer-git-dir", help="a git directory of a2a-registry (the peer)")
    parser.add_argument("--peer-venv", default="/tmp/a2a-registry-peer-venv")
    parser.add_argument("--peer-db10k", default="postgres://postgres@127.0.0.1:5432/reg_peer10k")
    parser.add_argument("--peer-db100k", default="postgres://postgres@127.0.0.1:5432/reg_peer100k")
    parser.add_argument("--peer-duration", type=int, default=15)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out", help="also write the tables to this file")
    args = parser.parse_args()
    for url in (args.db10k, args.db100k, args.redis_url, args.peer_db10k, args.peer_db100k):
        if url:
            check_loopback(url)
    facts = machine(args)
    started = time.monotonic()
    parts: list[tuple[str, str]] = [
        ("Web cores per door, 10,000 agents", door_table(args, args.db10k, "10,000"))
    ]
    if args.db100k:
        for only in ("GET /api/v1/agents/{id}", "search by meaning"):
            parts.append(
                (f"100,000 agents: {only}", door_table(args, args.db100k, "100,000", only))
            )
    if args.peer_git_dir:
        parts.append(
            ("Side by side with the peer, 10,000 agents",
             peer_table(args, 10_000, args.db10k, args.peer_db10k))
        )  # fmt: skip
        if args.db100k:
            parts.append(
                ("Side by side with the peer, 100,000 agents",
                 peer_table(args, 100_000, args.db100k, args.peer_db100k))
            )  # fmt: skip
    load = os.getloadavg()
    text = header(facts, f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    text += f" The run took {(time.monotonic() - started) / 60:.0f} minutes.\n"
    for title, table in parts:
        text += f"\n{title}:\n\n{table}\n"
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()

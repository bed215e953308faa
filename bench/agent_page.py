"""Server CPU of the anonymous agent page of typical agents, for source trees side by side
(issue 49: "an agent page in a few milliseconds").

Each tree (``--tree NAME=DIR``: a checkout of the registry, run with this venv) is served as
deployed (granian, ``registry/rsgi.py``, 2 workers, from its own directory and port) on the same
database, and wrk asks each for ``GET /agents/{id}`` in turns: for every run, every tree, every
mode, the order alternating between runs so a drift of the machine's load falls on each alike.
Server CPU a request is utime+stime of the tree's granian processes over the run (/proc),
divided by the requests answered; PostgreSQL's is the CPU of the database's backends
(``pg_stat_activity``) over the same run. Modes:

- ``kept``: ``--distinct`` agents, cycled, after a pass over each (what the page cache keeps:
  cards/catalogue/page_cache.py; a tree without one renders every page);
- ``rendered``: the cache emptied (``FLUSHDB`` of the bench's Redis database) before the run,
  and each wrk thread walks its own share of every agent with a card, so no page is asked for
  twice in a run: every answer is rendered (a first read after a change).

The database must be seeded first (bench/seed.py, which renders the documents too)::

    .venv/bin/python bench/seed.py -n 10000 --workers 2 \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k
    .venv/bin/python bench/agent_page.py --tree before=/tmp/before --tree after=. \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_me10k

``--in-process N`` instead reads N pages in this process (Django's test client) and prints the
median CPU of each mode (``--profile K``: and the top K functions by CPU, cProfile), for
``valgrind --tool=callgrind`` (``--instructions N1,N2`` runs it: the instructions of N2 reads
less those of N1, over N2 - N1, so start-up cancels out).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    DEFAULT_DATABASE_URL,
    CpuTracker,
    bench_env,
    children_of,
    cpu_seconds,
    machine_cpu_seconds,
    machine_summary,
    setup_django,
)
from bench.peer_compare import ours_command, stop, wait_up  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODES = ("kept", "rendered")

# Each thread takes every n-th line from its own offset; ``once`` stops at the end of its share
# (wrk then sends nothing more from that thread) instead of starting again.
LUA = r"""
local threads = {}
local counter = 0

setup = function(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

init = function(args)
  requests = {}
  sent = 0
  local share = tonumber(args[2])
  local line = 0
  for path in io.lines(args[1]) do
    if line % share == id then
      table.insert(requests, wrk.format("GET", path))
    end
    line = line + 1
  end
end

request = function()
  sent = sent + 1
  return requests[((sent - 1) % #requests) + 1]
end
"""


def agent_ids(database_url: str, count: int, seed: int) -> list[str]:
    """Agents an anonymous reader may see (a card, a public state), shuffled by ``seed``."""
    setup_django(database_url)
    from cards.reads import gate

    ids = [str(pk) for pk in gate.agents().order_by("pk").values_list("pk", flat=True)]
    if not ids:
        raise SystemExit("no agent with a card: seed the database first (the module's docstring)")
    random.Random(seed).shuffle(ids)
    return ids[:count] if count else ids


def backends(database_url: str) -> Any:
    """The pids of the PostgreSQL backends serving the bench's database, read when asked."""
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    admin = database_url.rsplit("/", 1)[0] + "/postgres"
    conn = psycopg.connect(admin, autocommit=True)

    def pids() -> list[int]:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        ).fetchall()
        return [row[0] for row in rows]

    return pids


def _wrk(port: int, paths: Path, threads: int, connections: int, seconds: int) -> int:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA)
    out = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "-s",
         script.name, f"http://127.0.0.1:{port}", "--", str(paths), str(threads)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    os.unlink(script.name)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{errors.group(1)} answers were not 2xx:\n{out}")
    return int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]


def _visit(port: int, ids: list[str]) -> None:
    """Ask for each agent's page once (4 at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    def get(pk: str) -> None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/agents/{pk}", timeout=60) as page:
            page.read()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(get, ids))


def _flush(redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushdb()


def _start(args: argparse.Namespace, tree: Path, port: int) -> subprocess.Popen[bytes]:
    env = bench_env(
        args.database_url,
        REDIS_URL=args.redis_url,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        REGISTRY_ANON_RATE="off",  # one client address sends everything
    )
    process = subprocess.Popen(
        ours_command("granian", port, args.workers),
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{port}/healthz", process, f"the server of {tree}")
    return process


def serve(args: argparse.Namespace) -> list[dict[str, Any]]:
    trees = dict(item.split("=", 1) for item in args.tree)
    kept_ids = agent_ids(args.database_url, args.distinct, args.seed)
    every_id = agent_ids(args.database_url, 0, args.seed + 1)
    work = Path(tempfile.mkdtemp())
    (work / "kept.txt").write_text("".join(f"/agents/{pk}\n" for pk in kept_ids))
    (work / "rendered.txt").write_text("".join(f"/agents/{pk}\n" for pk in every_id))
    postgres = backends(args.database_url)
    servers = {}
    rows: list[dict[str, Any]] = []
    try:
        for index, (name, tree) in enumerate(trees.items()):
            servers[name] = _start(args, Path(tree).resolve(), args.port + index)
        order = list(trees)
        for run in range(args.runs):
            for name in order if run % 2 == 0 else order[::-1]:
                port = args.port + list(trees).index(name)
                pids = [servers[name].pid, *children_of(servers[name].pid)]
                for mode in MODES:
                    _flush(args.redis_url)
                    paths = work / f"{mode}.txt"
                    if mode == "kept":  # every agent once: then each is in the cache
                        _visit(port, kept_ids)
                    busy, total = machine_cpu_seconds()
                    before = cpu_seconds(pids)
                    with CpuTracker(postgres) as database:
                        answered = _wrk(port, paths, 2, args.connections, args.duration)
                    server_ms = (cpu_seconds(pids) - before) * 1000 / answered
                    busy2, total2 = machine_cpu_seconds()
                    cores = (total2 - total) / (os.cpu_count() or 1)
                    row = {
                        "run": run, "tree": name, "mode": mode, "requests": answered,
                        "server_ms": round(server_ms, 3),
                        "postgres_ms": round(database.seconds * 1000 / answered, 3),
                        "machine_busy_cores": round((busy2 - busy) / cores, 2),
                    }  # fmt: skip
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        for process in servers.values():
            stop(process)
    return rows


def table(rows: list[dict[str, Any]]) -> None:
    print("\n| tree | mode | server CPU ms a page (median of runs) | runs | PostgreSQL ms |")
    print("|---|---|---:|---|---:|")
    for name in dict.fromkeys(row["tree"] for row in rows):
        for mode in MODES:
            mine = [row for row in rows if row["tree"] == name and row["mode"] == mode]
            cpu = [row["server_ms"] for row in mine]
            database = statistics.median(row["postgres_ms"] for row in mine)
            runs = ", ".join(f"{value:.2f}" for value in cpu)
            print(f"| {name} | {mode} | {statistics.median(cpu):.2f} | {runs} | {database:.2f} |")


def in_process(args: argparse.Namespace) -> None:
    """Read ``--in-process`` pages in this process, for each mode: ``kept`` cycles over 5
    agents read once before (each read after that is the cache's), ``rendered`` reads as many
    agents never read before (each is rendered and kept)."""
    if args.root:  # the tree measured: its code before this script's
        sys.path.insert(0, str(Path(args.root).resolve()))
        os.chdir(args.root)
    setup_django(args.database_url, ALLOWED_HOSTS="testserver", REGISTRY_ANON_RATE="off")
    from django.core.cache import cache
    from django.test import Client

    ids = agent_ids(args.database_url, 0, args.seed)
    warm, cycled, fresh = ids[:3], ids[3:8], ids[8 : 8 + args.in_process]
    if len(fresh) < args.in_process:
        raise SystemExit(f"{len(ids)} agents: too few for {args.in_process} fresh ones")
    client = Client()
    for pk in warm * 2:  # templates, compiled SQL, the code's digest
        client.get(f"/agents/{pk}")
    cache.clear()
    for mode in args.modes.split(","):
        chosen = fresh if mode == "rendered" else cycled
        if mode == "kept":
            for pk in cycled:
                client.get(f"/agents/{pk}")
        times = []
        profiler = cProfile.Profile(time.process_time)
        for number in range(args.in_process):
            pk = chosen[number % len(chosen)]
            started = time.process_time()
            if args.profile:
                profiler.enable()
            assert client.get(f"/agents/{pk}").status_code == 200
            if args.profile:
                profiler.disable()
            times.append((time.process_time() - started) * 1000)
        print(f"{mode}: {len(times)} pages, median {statistics.median(times):.3f} ms CPU")
        if args.profile:
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
            stats.print_stats(args.profile)
            print(out.getvalue())


def instructions(args: argparse.Namespace) -> None:
    """Instructions a page (callgrind) of each tree and mode: (I(N2) - I(N1)) / (N2 - N1)."""
    low, high = (int(n) for n in args.instructions.split(","))
    for item in args.tree:
        name, tree = item.split("=", 1)
        for mode in MODES:
            counts = []
            for pages in (low, high):
                out = Path(tempfile.mkdtemp()) / "callgrind.out"
                command = [
                    "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    sys.executable, __file__, "--root", tree,
                    "--database-url", args.database_url, "--in-process", str(pages),
                    "--modes", mode, "--seed", str(args.seed),
                ]  # fmt: skip
                env = {**os.environ, "REDIS_URL": args.redis_url, "PYTHONHASHSEED": "0"}
                done = subprocess.run(command, capture_output=True, text=True, env=env)
                found = re.search(r"Collected : (\d+)", done.stderr)
                if done.returncode or not found:
                    raise SystemExit(done.stderr[-2000:])
                counts.append(int(found.group(1)))
            each = (counts[1] - counts[0]) / (high - low)
            print(f"| {name} | {mode} | {each / 1e6:.2f} M instructions a page |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR, one or more")
    parser.add_argument("--port", type=int, default=8796)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--distinct", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--in-process", type=int, default=0, help="read N pages in-process")
    parser.add_argument("--modes", default=",".join(MODES), help="with --in-process")
    parser.add_argument("--root", default="", help="with --in-process: the tree to import")
    parser.add_argument(
        "--profile", type=int, default=0, help="with --in-process: the top N functions (cProfile)"
    )
    parser.add_argument("--instructions", default="", help="N1,N2: callgrind each --tree")
    args = parser.parse_args()
    os.environ.setdefault("REDIS_URL", args.redis_url)
    if args.in_process:
        in_process(args)
        return
    if args.instructions:
        instructions(args)
        return
    if not args.tree:
        args.tree = [f"this={ROOT}"]
    print(json.dumps(machine_summary()))
    print(f"granian --workers {args.workers}, wrk -c {args.connections} -d {args.duration}s, "
          f"{args.runs} runs, {args.distinct} agents cycled (kept)")  # fmt: skip
    table(serve(args))


if __name__ == "__main__":
    main()

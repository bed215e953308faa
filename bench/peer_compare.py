"""Side by side with the peer: the same synthetic agents, the same queries, ours and theirs.

The peer is the a2a-registry backend (``prassanna-ravishankar/a2a-registry``, FastAPI + asyncpg),
served as its ``backend/run.py`` and Dockerfile serve it, with granian (``--peer-server``), with
2 workers like ours. Its code is taken at run time from a local git
directory (``git archive <commit> backend``) into a temporary directory and never committed
here; its locked requirements (``backend/uv.lock``) are installed into its own virtualenv with
pip (every package pinned to its locked version), and its own migrations
(``backend/migrations/versions/*.sql``) are applied to its own database.

Both get the same deterministic agents (bench/synth.py): ours through bench/seed.py, the peer's
as rows of its ``agents`` table written with SQL, with the same ids and creation times (read
back from our database) so "fetch by id" asks both for the same agents.

Queries (each as the peer spells it): fetch by id, first page (20 agents), a tag, the deep page
(rows 5,001-5,020: our cursor for page 251, the peer's ``offset=5000``), and the framework floor
(our ``/healthz``, the peer's ``/api/health``). Each query runs on ours and the peer in turn
(the order alternating between passes), with wrk ``-t1 -c16``: a warm-up, then a recorded run.
Server CPU per request is utime+stime (``/proc``) of the server's process tree over the recorded
run divided by the requests served.

Ours is served as in production (the Dockerfile's ``granian --interface rsgi ...
registry.rsgi:application``; ``--ours-server gunicorn`` for gunicorn.conf.py) with the
anonymous limiter on: one wrk address sends everything, so its rate is raised
(``--ours-anon-rate``), not turned off; the per-request work of the limiter stays.

Example::

    .venv/bin/python bench/peer_compare.py \\
        --peer-git-dir /work/.mirror/prassanna-ravishankar+a2a-registry/repo \\
        --agents 10000 --warmup 3 --duration 20 --passes 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
PYTHON = Path(sys.executable)
sys.path.insert(0, str(ROOT))

from bench._common import cpu_seconds, process_cpu_seconds  # noqa: E402

SYNTH_SEED = 1
PAGE = 20
DEEP_OFFSET = 5000  # the deep page starts at row 5,001

LUA = """
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1])
end
"""

QUERIES = ("by-id", "first-page", "tag", "deep-page", "floor")


# --- processes and CPU ------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants (uvicorn's workers are spawned grandchildren too)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                parents[int(entry)] = int(fields[1])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
        tree += frontier
    return tree


def wait_up(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit(f"{what} did not answer {url}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server and every process it started (a granian worker can outlive its master)."""
    tree = process_tree(process.pid)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 10
    for pid in tree[1:]:
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --- ours -------------------------------------------------------------------------------------


def seed_ours(args: argparse.Namespace) -> None:
    # bench/seed.py drops and creates only databases named *bench*; another name is seeded only
    # while it holds no agent (created and migrated by seed.py when missing).
    recreate = ["--recreate"] if "bench" in urlsplit(args.ours_db).path else []
    if not recreate and count(args.ours_db, "cards_agent") > 0:
        raise SystemExit(f"{args.ours_db} holds other agents: name it *bench* or empty it")
    subprocess.run(
        [
            str(PYTHON),
            str(ROOT / "bench" / "seed.py"),
            "-n",
            str(args.agents),
            *recreate,
            "--verify",
            "0",
            "--seed",
            str(SYNTH_SEED),
            "--workers",
            "2",
            "--database-url",
            args.ours_db,
        ],
        cwd=ROOT,
        check=True,
    )


def ours_agents(database_url: str) -> list[tuple[Any, datetime, int]]:
    """(id, created_at, synthetic index) of every agent seeded into ours."""
    import psycopg

    pattern = re.compile(rf"^https://agent-{SYNTH_SEED}-(\d+)\.registry-bench\.example\.com$")
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT id, created_at, url FROM cards_agent").fetchall()
    found = []
    for agent_id, created, url in rows:
        match = pattern.match(url)
        if match:
            found.append((agent_id, created, int(match.group(1))))
    return found


def start_ours(args: argparse.Namespace) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": args.ours_db,
        "REDIS_URL": args.redis_url,
        "DJANGO_SECRET_KEY": "bench-only-secret-not-for-production",
        "DJANGO_DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GUNICORN_BIND": f"127.0.0.1:{args.ours_port}",
        "REGISTRY_ANON_RATE": args.ours_anon_rate,
        "REGISTRY_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        ours_command(args.ours_server, args.ours_port),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{args.ours_port}/healthz", process, f"{args.ours_server} (ours)")
    return process


def ours_command(server: str, port: int, workers: int = 2) -> list[str]:
    """granian: the Dockerfile's CMD (registry/rsgi.py) on ``port``; gunicorn: gunicorn.conf.py
    (GUNICORN_BIND carries the port)."""
    if server == "gunicorn":
        return [str(PYTHON.parent / "gunicorn"), "-c", "gunicorn.conf.py", "registry.wsgi"]
    return [
        str(PYTHON.parent / "granian"),
        "--interface", "rsgi",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--workers", str(workers),
        "--no-ws",
        "--respawn-failed-workers",
        "--log-level", "warning",
        "registry.rsgi:application",
    ]  # fmt: skip


def ours_deep_path(port: int) -> str:
    """The path of our page holding rows 5,001-5,020: the cursor is found by following ``next``."""
    path = f"/api/v1/agents?limit={PAGE}"
    for _ in range(DEEP_OFFSET // PAGE):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
            body = json.load(answer)
        following = body.get("next")
        if not following:
            raise SystemExit("fewer agents than the deep page needs (seed at least 5,020)")
        parts = urlsplit(following)
        path = parts.path + ("?" + parts.query if parts.query else "")
    return path


# --- the peer ---------------------------------------------------------------------------------


def extract_peer(git_dir: str, commit: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, "backend"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryFile() as fh:
        fh.write(archive)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(into, filter="data")
    return into / "backend"


def peer_venv(backend: Path, venv: Path) -> Path:
    """A virtualenv with the peer's locked requirements (uv.lock versions, installed by pip)."""
    if (venv / "bin" / "uvicorn").exists():
        return venv
    lock = tomllib.loads((backend / "uv.lock").read_text())
    pins = [
        f"{package['name']}=={package['version']}"
        for package in lock["package"]
        if "registry" in package.get("source", {})
    ]
    venv.parent.mkdir(parents=True, exist_ok=True)  # a fresh machine has no such directory
    constraints = venv.parent / (venv.name + "-constraints.txt")
    constraints.write_text("\n".join(pins) + "\n")
    project = tomllib.loads((backend / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], "uvicorn"]
    base = Path(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([str(base), "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "-c", str(constraints), *wanted], check=True
    )
    return venv


def peer_database(args: argparse.Namespace, backend: Path) -> None:
    """Recreate the peer's database and apply its own migrations, in order."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(args.peer_db)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and "bench" not in name:
            # Only databases named *bench* are dropped; another name must not exist yet.
            raise SystemExit(f"refusing to drop {name!r}: name it *bench* or drop it first")
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(args.peer_db, autocommit=True) as conn:
        for migration in sorted((backend / "migrations" / "versions").glob("*.sql")):
            conn.execute(migration.read_text().encode())


def peer_row(card: dict[str, Any], agent_id: Any, created: datetime, index: int) -> tuple[Any, ...]:
    """One row of the peer's ``agents`` table for a synthetic card, as its registration fills it."""
    from psycopg.types.json import Jsonb

    interfaces = card.get("supportedInterfaces") or []
    url = card.get("url") or (interfaces[0]["url"] if interfaces else "")
    version = card.get("protocolVersion") or (
        interfaces[0].get("protocolVersion") if interfaces else "1.0"
    )
    provider = card.get("provider")
    origin = f"https://agent-{SYNTH_SEED}-{index}.registry-bench.example.com"
    return (
        agent_id,
        created,
        created,
        version,
        card["name"],
        card["description"],
        (provider or {}).get("organization") or "Unknown",
        origin + "/.well-known/agent-card.json",
        url,
        card["version"],
        Jsonb(provider) if provider else None,
        card.get("documentationUrl"),
        Jsonb(card["capabilities"]),
        Jsonb(card["defaultInputModes"]),
        Jsonb(card["defaultOutputModes"]),
        Jsonb(card["skills"]),
        card.get("iconUrl"),
        True,
    )


PEER_COLUMNS = (
    "id, created_at, updated_at, protocol_version, name, description, author, well_known_uri, "
    "url, version, provider, documentation_url, capabilities, default_input_modes, "
    "default_output_modes, skills, icon_url, conformance"
)


def seed_peer(args: argparse.Namespace, agents: list[tuple[Any, datetime, int]]) -> None:
    import psycopg

    from bench import synth

    placeholders = ", ".join(["%s"] * len(PEER_COLUMNS.split(",")))
    statement = f"INSERT INTO agents ({PEER_COLUMNS}) VALUES ({placeholders})"
    with psycopg.connect(args.peer_db) as conn, conn.cursor() as cur:
        batch: list[tuple[Any, ...]] = []
        for agent_id, created, index in sorted(agents, key=lambda a: a[2]):
            batch.append(peer_row(synth.make_card(SYNTH_SEED, index), agent_id, created, index))
            if len(batch) >= 1000:
                cur.executemany(statement, batch)
                batch = []
        if batch:
            cur.executemany(statement, batch)
        conn.commit()
    with psycopg.connect(args.peer_db, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


def start_peer(args: argparse.Namespace, backend: Path, venv: Path) -> subprocess.Popen[bytes]:
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/tmp"),
        "DATABASE_URL_OVERRIDE": args.peer_db.replace("postgres://", "postgresql://", 1),
        "POSTHOG_ENABLED": "false",
        "LOG_LEVEL": "WARNING",
    }
    if args.peer_server == "granian":
        # The peer's own way (backend/run.py, the Dockerfile's CMD), with --peer-workers workers.
        command = [
            str(venv / "bin" / "granian"),
            "--interface",
            "asgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(args.peer_port),
            "--workers",
            str(args.peer_workers),
            "--log-level",
            "warning",
            "app.main:app",
        ]
    else:
        command = [
            str(venv / "bin" / "uvicorn"),
            "app.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(args.peer_port),
            "--workers",
            str(args.peer_workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
    process = subprocess.Popen(
        command,
        cwd=backend,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_up(f"http://127.0.0.1:{args.peer_port}/api/health", process, f"{args.peer_server} (peer)")
    return process


# --- load ---------------------------------------------------------------------------------------


def wrk(
    port: int, paths: list[str], threads: int, connections: int, seconds: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        script, listing = Path(tmp) / "paths.lua", Path(tmp) / "paths.txt"
        script.write_text(LUA)
        listing.write_text("\n".join(paths) + "\n")
        out = subprocess.run(
            [
                "wrk",
                f"-t{threads}",
                f"-c{connections}",
                f"-d{seconds}s",
                "--latency",
                "-s",
                str(script),
                f"http://127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "BENCH_PATHS": str(listing)},
            check=True,
        ).stdout

    def pct(label: str) -> float:
        match = re.search(rf"\s{label}%\s+([\d.]+)(us|ms|s)\b", out)
        if match is None:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    total = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {
        "requests": int(total.group(1)) if total else 0,
        "rps": float(rps.group(1)) if rps else 0.0,
        "non2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1) if errors else "",
        "p50": pct("50"),
        "p99": pct("99"),
    }


def database_backends(database_url: str) -> list[int]:
    """The PostgreSQL backends connected to ``database_url``'s database (the server's, after
    its warm-up: both sides keep their connections), this query's own left out."""
    import psycopg

    name = urlsplit(database_url).path.lstrip("/")
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        ).fetchall()
    return [int(row[0]) for row in rows]


def measure(
    args: argparse.Namespace,
    port: int,
    server: subprocess.Popen[bytes],
    paths: list[str],
    database_url: str,
) -> dict[str, Any]:
    wrk(port, paths, args.threads, args.connections, args.warmup)
    pids = process_tree(server.pid)
    backends = database_backends(database_url)
    before = cpu_seconds(pids)
    before_db = {pid: process_cpu_seconds(pid) for pid in backends}
    load = os.getloadavg()[0]
    result = wrk(port, paths, args.threads, args.connections, args.duration)
    requests = max(result["requests"], 1)
    result["cpu_ms"] = (cpu_seconds(pids) - before) / requests * 1000
    # Backends that lived through the run: one that ended (a connection past its age) takes
    # its CPU with it, so the figure is a floor.
    after_db = {pid: process_cpu_seconds(pid) for pid in backends if _stat(pid) is not None}
    spent = sum(after_db[pid] - before_db[pid] for pid in after_db)
    result["db_cpu_ms"] = spent / requests * 1000
    result["load"] = load
    return result


def check_paths(port: int, paths: list[str]) -> None:
    """The first paths answer 200 (a connection reset while a server's workers still start is
    tried again, up to 5 times)."""
    for path in paths[:3]:
        for attempt in range(5):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
                    if answer.status != 200:
                        raise SystemExit(f"{path} answered {answer.status}")
                break
            except ConnectionError:
                if attempt == 4:
                    raise
                time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-git-dir", required=True, help="a git directory of a2a-registry")
    parser.add_argument("--peer-commit", default="604b943")
    parser.add_argument("--peer-venv", default="/tmp/a2a-registry-peer-venv")
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument(
        "--ours-db", default="postgres://postgres@127.0.0.1:5432/registry_peer_ours_bench"
    )
    parser.add_argument(
        "--peer-db", default="postgres://postgres@127.0.0.1:5432/registry_peer_bench"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--ours-port", type=int, default=8091)
    parser.add_argument("--peer-port", type=int, default=8092)
    parser.add_argument("--peer-workers", type=int, default=2)
    parser.add_argument(
        "--peer-server",
        choices=("granian", "uvicorn"),
        default="granian",
        help="granian: the peer's backend/run.py and Dockerfile; uvicorn: the locked uvicorn "
        "without httptools, whose h11 answers wait 40 ms on every keep-alive request here",
    )
    parser.add_argument(
        "--ours-server",
        choices=("granian", "gunicorn"),
        default="granian",
        help="granian: the Dockerfile's CMD (registry/rsgi.py); gunicorn: gunicorn.conf.py",
    )
    parser.add_argument(
        "--ours-anon-rate",
        default="100000000/minute",
        help="the anonymous limit, raised above what one wrk address sends (still counted)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--queries", default=",".join(QUERIES))
    parser.add_argument(
        "--reseed",
        action="store_true",
        help="seed both again (by default a database already holding --agents agents is reused)",
    )
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (Debian: apt-get install wrk)")
    for url in (args.ours_db, args.peer_db, args.redis_url):
        if urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"loopback addresses only: {url}")
    queries = [q for q in args.queries.split(",") if q]

    with tempfile.TemporaryDirectory(prefix="peer-") as tmp:
        backend = extract_peer(args.peer_git_dir, args.peer_commit, Path(tmp))
        venv = peer_venv(backend, Path(args.peer_venv))
        t0 = time.monotonic()
        if args.reseed or count(args.ours_db, "cards_agent") != args.agents:
            seed_ours(args)
        agents = ours_agents(args.ours_db)
        if (
            args.reseed
            or count(args.peer_db, "agents") != len(agents)
            or not peer_holds(args.peer_db, agents[0][0])
        ):  # the peer is seeded with our ids: another database of ours seeds it again
            peer_database(args, backend)
            seed_peer(args, agents)
        print(f"{len(agents)} agents in both ({time.monotonic() - t0:.0f}s)", flush=True)
        rng = random.Random(7)
        ids = [str(a[0]) for a in rng.sample(agents, min(1000, len(agents)))]
        tags = top_tags(args.ours_db)

        ours = start_ours(args)
        peer = start_peer(args, backend, venv)
        try:
            paths = {
                "by-id": (
                    [f"/api/v1/agents/{i}" for i in ids],
                    [f"/api/agents/{i}" for i in ids],
                ),
                "first-page": ([f"/api/v1/agents?limit={PAGE}"], [f"/api/agents?limit={PAGE}"]),
                "tag": (
                    [f"/api/v1/agents?tag={quote(t)}&limit={PAGE}" for t in tags],
                    [f"/api/agents?skill={quote(t)}&limit={PAGE}" for t in tags],
                ),
                "floor": (["/healthz"], ["/api/health"]),
            }
            if "deep-page" in queries:  # found by following pages: only when it is asked for
                paths["deep-page"] = (
                    [ours_deep_path(args.ours_port)],
                    [f"/api/agents?limit={PAGE}&offset={DEEP_OFFSET}"],
                )
            for name in queries:
                check_paths(args.ours_port, paths[name][0])
                check_paths(args.peer_port, paths[name][1])
            results: dict[str, list[dict[str, Any]]] = {}
            for number in range(args.passes):
                for name in queries:
                    sides = [
                        ("ours", args.ours_port, ours, 0, args.ours_db),
                        ("peer", args.peer_port, peer, 1, args.peer_db),
                    ]
                    if number % 2:
                        sides.reverse()
                    row: dict[str, Any] = {"pass": number + 1}
                    for side, port, server, which, database in sides:
                        row[side] = measure(args, port, server, paths[name][which], database)
                    results.setdefault(name, []).append(row)
                    print_row(name, row)
        finally:
            stop(ours)
            stop(peer)
    print_table(args, results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


def count(database_url: str, table: str) -> int:
    """Rows in ``table`` (-1 when the database or the table does not exist)."""
    import psycopg

    try:
        with psycopg.connect(database_url) as conn:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    except psycopg.Error:
        return -1
    return int(row[0]) if row else -1


def peer_holds(database_url: str, agent_id: Any) -> bool:
    """Whether the peer's ``agents`` table holds ``agent_id`` (seeded from this database)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT 1 FROM agents WHERE id = %s", [agent_id]).fetchone()
    return row is not None


def top_tags(database_url: str) -> list[str]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT key FROM cards_facetcount WHERE kind = 'tag' ORDER BY agents DESC LIMIT 50"
        ).fetchall()
    return [r[0] for r in rows]


def print_row(name: str, row: dict[str, Any]) -> None:
    ours, peer = row["ours"], row["peer"]
    ratio = ours["rps"] / peer["rps"] if peer["rps"] else float("inf")
    print(
        f"pass {row['pass']} {name:10s} ours {ours['rps']:8.0f} req/s p50 {ours['p50']:6.2f} "
        f"p99 {ours['p99']:7.2f} ms cpu {ours['cpu_ms']:.3f} (db {ours['db_cpu_ms']:.3f}) "
        f"ms/req non2xx {ours['non2xx']} | "
        f"peer {peer['rps']:8.1f} req/s p50 {peer['p50']:7.2f} p99 {peer['p99']:8.2f} ms "
        f"cpu {peer['cpu_ms']:.3f} (db {peer['db_cpu_ms']:.3f}) ms/req non2xx {peer['non2xx']} "
        f"| ours/peer {ratio:.2f}x "
        f"(load {ours['load']:.1f}/{peer['load']:.1f})",
        flush=True,
    )


def _cells(rows: list[dict[str, Any]]) -> Any:
    def cell(side: str, key: str, fmt: str) -> str:
        return " / ".join(format(r[side][key], fmt) for r in rows)

    return cell


def print_table(args: argparse.Namespace, results: dict[str, list[dict[str, Any]]]) -> None:
    print()
    print(
        f"| {args.agents:,} agents, wrk -t{args.threads} -c{args.connections}, "
        f"{args.warmup} s + {args.duration} s | ours req/s | peer req/s | ours/peer "
        "| ours p50 / p99 ms | peer p50 / p99 ms | ours CPU ms/req | peer CPU ms/req "
        "| ours PostgreSQL CPU ms/req | peer PostgreSQL CPU ms/req |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        cell = _cells(rows)

        ratios = " / ".join(
            f"{r['ours']['rps'] / r['peer']['rps']:.2f}" if r["peer"]["rps"] else "inf"
            for r in rows
        )
        lat = " / ".join(f"{r['ours']['p50']:.1f}, {r['ours']['p99']:.1f}" for r in rows)
        peer_lat = " / ".join(f"{r['peer']['p50']:.1f}, {r['peer']['p99']:.1f}" for r in rows)
        print(
            f"| {name} | {cell('ours', 'rps', ',.0f')} | {cell('peer', 'rps', ',.1f')} "
            f"| {ratios} | {lat} | {peer_lat} | {cell('ours', 'cpu_ms', '.2f')} "
            f"| {cell('peer', 'cpu_ms', '.2f')} | {cell('ours', 'db_cpu_ms', '.2f')} "
            f"| {cell('peer', 'db_cpu_ms', '.2f')} |"
        )


if __name__ == "__main__":
    main()

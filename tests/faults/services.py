"""Private PostgreSQL and Redis instances for the fault tests, and the registry's processes on them.

Every fault test stops and kills services; it does so to instances it started itself, on free
ports, in temporary directories. The machine's PostgreSQL (5432) and Redis (6379) are never used.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def postgres_binaries() -> Path | None:
    """The newest PostgreSQL server binaries on this machine (Debian's layout, then PATH)."""
    for directory in sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
        reverse=True,
    ):
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    return None


def postgres_unavailable_reason() -> str | None:
    if postgres_binaries() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to own a private cluster"
        if shutil.which("runuser") is None:
            return "running as root and `runuser` is missing (needed to run PostgreSQL as postgres)"
    return None


class PrivatePostgres:
    """A throwaway PostgreSQL cluster: initdb into a temporary directory, trust auth, one port."""

    def __init__(self) -> None:
        reason = postgres_unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        binaries = postgres_binaries()
        assert binaries is not None
        self.bin = binaries
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="registry-faults-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        # PostgreSQL refuses to run as root: run it as `postgres`, which must own the directory.
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, str(self.bin / tool), *args],
            check=check,
            capture_output=True,
            text=True,
            timeout=120,
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/registry"

    def start(self) -> None:
        # fsync off: the machine does not crash, only PostgreSQL. Commits stay synchronous
        # (the default): with them asynchronous, a kill -9 loses commits PostgreSQL had
        # already acknowledged, which no production setting of the registry does.
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c full_page_writes=off -c max_connections=60"
        )
        # After a kill -9 the old backends take a moment to notice; start refuses until then.
        for _ in range(40):
            done = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t",
                "30", "start", check=False,
            )  # fmt: skip
            if done.returncode == 0:
                return
            time.sleep(0.5)
        raise RuntimeError(f"PostgreSQL did not start: {done.stdout}{done.stderr}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "30", "stop")

    def kill_postmaster(self) -> None:
        """``kill -9`` of the postmaster, as a crash or the OOM killer would."""
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not _alive(pid), timeout=10)

    def restart(self, *, kill: bool = False) -> None:
        if kill:
            self.kill_postmaster()
        else:
            self.stop("fast")
        self.start()

    def create_database(self, name: str = "registry") -> None:
        self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d",
                  "postgres", "-qc", f'CREATE DATABASE "{name}"')  # fmt: skip

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


class PrivateRedis:
    """A redis-server on a free port, in the foreground of a child process, nothing persisted."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="registry-faults-redis-"))
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.root),
                "--logfile", str(self.root / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if not wait_until(lambda: port_open(self.port), timeout=10):
            raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.resume()
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def pause(self) -> None:
        """Hang it (``SIGSTOP``): connections are still accepted by the kernel, nothing is
        answered, as a Redis stuck or unreachable behind a silent network looks."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.process is not None and self.paused:
            self.process.send_signal(signal.SIGCONT)
        self.paused = False

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Registry:
    """The registry's processes (web server, Celery worker) on the private services."""

    def __init__(self, postgres: PrivatePostgres, redis: PrivateRedis, logs: Path) -> None:
        self.env = {
            **os.environ,
            "DATABASE_URL": postgres.url,
            "REDIS_URL": redis.url,
            "DJANGO_SECRET_KEY": "faults-" + secrets.token_urlsafe(32),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "REGISTRY_ANON_RATE": "off",
            "REGISTRY_EMBEDDINGS": "off",
            "REGISTRY_FETCH_ALLOW_HTTP": "true",
            "REGISTRY_FETCH_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
            "REGISTRY_CRAWL_RETRY_BASE_SECONDS": "0.5",
            "REGISTRY_ORIGIN_MIN_GAP_SECONDS": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("CELERY_BROKER_URL", None)
        self.env.pop("DJANGO_DEBUG", None)
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes]] = []
        # Every answer a server gave while serve() waited for it, by status (its /healthz).
        self.startup_answers: Counter[int] = Counter()

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout.strip()

    def _spawn(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        return process

    def serve(self, command: list[str] | None = None, **extra_env: str) -> str:
        """Start a web server (uvicorn on registry.asgi unless told otherwise); its base URL."""
        port = free_port()
        command = command or [
            sys.executable, "-m", "uvicorn", "registry.asgi:application", "--host", "127.0.0.1",
            "--port", "{port}", "--log-level", "warning",
        ]  # fmt: skip
        command = [part.replace("{port}", str(port)) for part in command]
        extra = {name: value.replace("{port}", str(port)) for name, value in extra_env.items()}
        process = self._spawn("server", command, {**self.env, **extra})
        base = f"http://127.0.0.1:{port}"

        def answers() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited ({process.returncode}); see {self.logs}")
            try:
                status = httpx.get(base + "/healthz", timeout=2).status_code
            except httpx.HTTPError:
                return False
            self.startup_answers[status] += 1
            return status == 200

        if not wait_until(answers, timeout=60, step=0.2):
            raise RuntimeError(f"the server did not answer; see {self.logs}")
        return base

    def worker(self, pool: str = "solo", **extra_env: str) -> subprocess.Popen[bytes]:
        return self._spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "registry",
                "worker",
                f"--pool={pool}",
                "--concurrency=1",
                "--loglevel=INFO",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
            ],  # fmt: skip
            {**self.env, **extra_env},
        )

    def beat(self, **extra_env: str) -> subprocess.Popen[bytes]:
        """Celery beat as compose runs it, its schedule file in the logs' directory."""
        schedule = self.logs / f"celerybeat-schedule-{len(self.processes)}"
        return self._spawn(
            "beat",
            [sys.executable, "-m", "celery", "-A", "registry", "beat", "--loglevel=INFO",
             "--schedule", str(schedule)],
            {**self.env, **extra_env},
        )  # fmt: skip

    def stop(self, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
        """Stop one of the processes as an orchestrator does: SIGTERM to its main process
        (``docker stop``: the container's first process), then SIGKILL to them all."""
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


@contextlib.contextmanager
def private_services() -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    postgres = PrivatePostgres()
    redis = PrivateRedis()
    try:
        postgres.start()
        postgres.create_database()
        redis.start()
        yield postgres, redis
    finally:
        redis.close()
        postgres.close()

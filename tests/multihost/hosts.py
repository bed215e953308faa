"""One host of the multi-host suite: a network namespace, a working directory of its own and the
processes it runs; and PostgreSQL and Redis as such hosts.

What a host shares with the others is the network and nothing else, but for two read-only
things every machine of a deployment has its own copy of anyway: the code checkout and the
virtualenv (an image). Each host's processes get their own ``HOME``, ``TMPDIR``, working
directory (where a stray relative path would land), ``REGISTRY_EMBEDDING_DIR`` (the converted
model and the vector index snapshot) and ``PROMETHEUS_MULTIPROC_DIR``; the environment is built
from nothing (not inherited from pytest), so no setting reaches a host by accident.

Every process runs under ``ip netns exec`` in a session of its own (``setsid``), so a host is
stopped with a signal to each process group, and killed for good with ``ip netns pids``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.faults.services import PrivatePostgres, wait_until
from tests.multihost.network import Plug, kill_everything_in

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
BIN = Path(sys.executable).parent


class Host:
    """A machine of the deployment: its plug on the network, its directory, its processes."""

    def __init__(self, plug: Plug, directory: Path, env: dict[str, str]) -> None:
        self.plug = plug
        self.directory = directory
        self.logs = directory / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        home, tmp = directory / "home", directory / "tmp"
        home.mkdir(exist_ok=True)
        tmp.mkdir(exist_ok=True)
        self.env = {
            "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "LANG": "C.UTF-8",
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "PYTHONPATH": str(ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",  # the checkout stays read-only
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def role(self) -> str:
        return self.plug.role

    @property
    def address(self) -> str:
        return self.plug.address

    def _argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.plug.ns, *argv]

    def spawn(self, name: str, argv: list[str], **env: str) -> subprocess.Popen[bytes]:
        """Start ``argv`` on this host in a session of its own, output in ``logs/<name>.log``."""
        with (self.logs / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(
                self._argv(argv),
                cwd=self.directory,
                env={**self.env, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        return process

    def run(self, argv: list[str], timeout: float = 300, **env: str) -> str:
        """Run ``argv`` on this host to its end; its output (an error names the log)."""
        done = subprocess.run(
            self._argv(argv),
            cwd=self.directory,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            output = done.stdout + done.stderr
            raise RuntimeError(f"{' '.join(argv)} failed on {self.role}:\n{output}")
        return done.stdout

    def manage(self, *args: str) -> str:
        return self.run([PYTHON, str(ROOT / "manage.py"), *args]).strip()

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_for_log(self, name: str, text: str, timeout: float = 90) -> None:
        process = self.processes[name]

        def seen() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"{name} on {self.role} exited:\n{self.log(name)[-3000:]}")
            return text in self.log(name)

        if not wait_until(seen, timeout=timeout, step=0.2):
            tail = self.log(name)[-3000:]
            raise RuntimeError(f"{name} on {self.role} never said {text!r}:\n{tail}")

    def send(self, name: str, sig: int) -> None:
        """Send ``sig`` to ``name``'s process group (SIGSTOP holds a worker off, SIGCONT lets
        it go on)."""
        os.killpg(self.processes[name].pid, sig)

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Signal ``name``'s process group and wait for it; SIGKILL if it lingers."""
        process = self.processes.pop(name, None)
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def kill(self) -> None:
        """SIGKILL every process group this host started, then anything left in its namespace."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)
        self.processes.clear()
        kill_everything_in(self.plug.ns)


class NamespacedPostgres(PrivatePostgres):
    """The fault tests' private cluster (initdb in a temporary directory, run as ``postgres``),
    started inside a host's namespace and listening on its address, port 5432."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host
        self.port = 5432  # the host's own port space
        self.prefix = ["ip", "netns", "exec", host.plug.ns, *self.prefix]
        # initdb's trust covers loopback only: the registry's nodes connect from the network.
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {host.address.rsplit('.', 1)[0]}.0/24 trust\n")

    @property
    def url(self) -> str:
        return f"postgres://postgres@{self.host.address}:{self.port}/registry"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses={self.host.address},127.0.0.1 -k {self.root} "
            "-c fsync=off -c full_page_writes=off -c max_connections=150"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60",
            "start",
        )  # fmt: skip


class NamespacedRedis:
    """A redis-server on a host's address, port 6379, nothing persisted."""

    def __init__(self, host: Host) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.host = host
        self.binary = binary

    @property
    def url(self) -> str:
        return f"redis://{self.host.address}:6379/0"

    def start(self) -> None:
        self.host.spawn(
            "redis",
            [
                self.binary, "--port", "6379", "--bind", self.host.address, "127.0.0.1",
                "--protected-mode", "no", "--save", "", "--appendonly", "no",
                "--dir", str(self.host.directory),
            ],
        )  # fmt: skip
        self.host.wait_for_log("redis", "Ready to accept connections", timeout=30)


def eventually(
    predicate: Callable[[], bool],
    timeout: float,
    what: str | Callable[[], str],
    step: float = 0.25,
) -> None:
    """Wait until ``predicate`` holds; fail naming ``what`` (or what it says, called once the
    time is up) when it does not in time."""
    started = time.monotonic()
    if not wait_until(predicate, timeout=timeout, step=step):
        said = what() if callable(what) else what
        raise AssertionError(f"{said} (waited {time.monotonic() - started:.0f} s)")

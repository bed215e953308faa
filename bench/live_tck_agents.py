"""The agents bench/live_tck_compare.py runs: real agents nobody here wrote, started from their
own checkouts under ``--ext`` on 127.0.0.1, each on free ports.

Nothing of theirs is in this repository. The checkouts and their virtualenvs are made by hand
(docs/live-checks.md, "Agreement with the A2A TCK", lists the commands); an agent whose
checkout or interpreter is missing is reported as not run, with the reason.

Two sets: ``tuned`` (agents the live checks' verdicts were adjusted against: a2a-python's
sample and its TCK SUT agent) and ``held-out`` (nobody looked at them while tuning: a2a-samples'
helloworld at a2a-sdk 1.1 and 0.3, a2a-js's samples).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

CARD_PATH = "/.well-known/agent-card.json"

# Runs a2a-samples' helloworld ``__main__.py`` as its README does, on another port: the sample
# writes its port (9999) into the card and into uvicorn.run, so the source is read, that number
# replaced by ours, and executed as ``__main__`` from the sample's directory.
_HELLOWORLD = """
import os, sys
port = sys.argv[1]
source = open("__main__.py").read().replace("9999", port)
sys.argv = ["__main__.py"]
sys.path.insert(0, os.getcwd())
exec(compile(source, "__main__.py", "exec"), {"__name__": "__main__"})
"""


@dataclass
class Launch:
    argv: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class AgentSpec:
    name: str
    group: str  # "tuned" or "held-out"
    source: str  # which checkout and commit, for the table
    needs: list[Path]
    launch: Callable[[list[int]], Launch]
    ports: int = 1  # how many free ports the launcher takes; the first serves HTTP
    fixed_port: int | None = None  # an agent that cannot be moved off its port


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def git_head(path: Path) -> str:
    done = subprocess.run(  # noqa: S603 - fixed arguments
        ["git", "-C", str(path), "log", "-1", "--format=%h %cs"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


def agents(ext: Path) -> list[AgentSpec]:
    python_sdk = ext / "venv-a2a-python" / "bin" / "python"
    a2a_python = ext / "a2a-python"
    samples_js = ext / "a2a-js" / "src" / "samples"
    tsx = samples_js / "node_modules" / ".bin" / "tsx"
    hello = {
        "1.1": (ext / "helloworld-1bb08712", ext / "venv-hello-1.1" / "bin" / "python"),
        "0.3": (ext / "helloworld-1cce9a59", ext / "venv-hello-0.3" / "bin" / "python"),
    }

    def sample(ports: list[int]) -> Launch:
        argv = [str(python_sdk), "samples/hello_world_agent.py", "--port", str(ports[0])]
        argv += ["--grpc-port", str(ports[1]), "--compat-grpc-port", str(ports[2])]
        return Launch(argv, a2a_python)

    def sut(ports: list[int]) -> Launch:
        env = {"HTTP_PORT": str(ports[0]), "GRPC_PORT": str(ports[1])}
        return Launch([str(python_sdk), "tck/sut_agent.py"], a2a_python, env)

    def helloworld(version: str) -> Callable[[list[int]], Launch]:
        directory, python = hello[version]
        return lambda ports: Launch([str(python), "-c", _HELLOWORLD, str(ports[0])], directory)

    def js_multi(ports: list[int]) -> Launch:
        env = {"HTTP_PORT": str(ports[0]), "GRPC_PORT": str(ports[1])}
        return Launch([str(tsx), "agents/multi-transport-agent/index.ts"], samples_js, env)

    def js_sample(ports: list[int]) -> Launch:
        return Launch(
            [str(tsx), "agents/sample-agent/index.ts"], samples_js, {"PORT": str(ports[0])}
        )

    js_source = f"a2a-js {git_head(ext / 'a2a-js')}"
    return [
        AgentSpec(
            "a2a-python sample (hello_world_agent.py)",
            "tuned",
            f"a2a-python {git_head(a2a_python)}",
            [python_sdk, a2a_python / "samples"],
            sample,
            ports=3,
        ),
        AgentSpec(
            "a2a-python TCK SUT agent (tck/sut_agent.py)",
            "tuned",
            f"a2a-python {git_head(a2a_python)}",
            [python_sdk, a2a_python / "tck"],
            sut,
            ports=2,
        ),
        AgentSpec(
            "a2a-samples helloworld, a2a-sdk 1.1.0",
            "held-out",
            "a2a-samples 1bb08712 2026-07-07",
            [hello["1.1"][0], hello["1.1"][1]],
            helloworld("1.1"),
        ),
        AgentSpec(
            "a2a-samples helloworld, a2a-sdk 0.3.0",
            "held-out",
            "a2a-samples 1cce9a59 2025-08-08",
            [hello["0.3"][0], hello["0.3"][1]],
            helloworld("0.3"),
        ),
        AgentSpec("a2a-js multi-transport-agent", "held-out", js_source, [tsx], js_multi, ports=2),
        # Its card names port 41241 whatever PORT says: run only where that port is free.
        AgentSpec("a2a-js sample-agent", "held-out", js_source, [tsx], js_sample, fixed_port=41241),
    ]


class Running:
    """One agent process (its own process group, ended by its own id) and its card URL."""

    def __init__(self, spec: AgentSpec, log_dir: Path) -> None:
        if spec.fixed_port is not None:
            if not port_is_free(spec.fixed_port):
                raise RuntimeError(f"its card's port {spec.fixed_port} is taken on this machine")
            ports = [spec.fixed_port]
        else:
            ports = [free_port() for _ in range(spec.ports)]
        launch = spec.launch(ports)
        self.origin = f"http://127.0.0.1:{ports[0]}"
        self.card_url = self.origin + CARD_PATH
        slug = "".join(c if c.isalnum() else "-" for c in spec.name.lower())
        self.log = log_dir / f"{slug}.log"
        env = dict(os.environ, **launch.env)
        for name in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "PYTHONPATH"):
            env.pop(name, None)
        with self.log.open("w") as log:
            self.process = subprocess.Popen(  # noqa: S603 - a launcher of ours
                launch.argv,
                cwd=launch.cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait()

    def _wait(self, seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-3:]
                raise RuntimeError(f"exited {self.process.returncode}: {' | '.join(tail)}")
            try:
                if httpx.get(self.card_url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"no card at {self.card_url} within {seconds:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

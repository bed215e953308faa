"""The agents bench/live_tck_compare.py runs: real agents nobody here wrote, started from their
own checkouts under ``--ext`` on 127.0.0.1, each on free ports (and, for reference, the
registry's own test agents).

Nothing of theirs is in this repository. The checkouts and their virtualenvs are made by hand
(docs/live-checks.md, "Agreement with the A2A TCK", lists the commands); an agent whose
checkout or interpreter is missing is reported as not run, with the reason.

Two sets: ``tuned`` (agents the live checks' verdicts were adjusted against: a2a-python's
sample and its TCK SUT agent, and the registry's own test agents of tests/live/agents.py) and
``held-out`` (nobody looked at them while tuning: a2a-samples' helloworld at a2a-sdk 1.1 and
0.3, the 0.3.x TCK's own python-sut agent, a2a-js's samples).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

CARD_PATH = "/.well-known/agent-card.json"

# Runs a sample's ``__main__.py`` (a2a-samples' helloworld, the 0.3.x TCK's python-sut) as its
# README does, on another port: the sample writes its port (9999) into the card and into
# uvicorn.run, so the source is read, that number replaced by ours (and a 0.0.0.0 bind by
# 127.0.0.1), and executed as ``__main__`` from the sample's directory.
_HELLOWORLD = """
import os, sys
port = sys.argv[1]
source = open("__main__.py").read().replace("9999", port).replace("0.0.0.0", "127.0.0.1")
sys.argv = ["__main__.py"]
sys.path.insert(0, os.getcwd())
exec(compile(source, "__main__.py", "exec"), {"__name__": "__main__"})
"""


# The registry's own test agents (tests/live/agents.py), in this repository's venv: each prints
# its origin, then serves until its stdin closes.
_OWN = """
import logging, sys
logging.disable(logging.CRITICAL)
from tests.live.agents import handmade_agent, sdk_agent
make = {"sdk-1.0": lambda: sdk_agent("1.0"), "sdk-0.3": lambda: sdk_agent("0.3"),
        "handmade": handmade_agent}[sys.argv[1]]
with make() as agent:
    print(agent.base_url, flush=True)
    sys.stdin.read()
"""
ROOT = Path(__file__).resolve().parent.parent


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
    announces: bool = False  # it picks its own port and prints its origin first


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

    core_agent = ext / "tck-0.3" / "python-sut" / "tck_core_agent"

    def tck_core(ports: list[int]) -> Launch:
        python = hello["0.3"][1]
        return Launch([str(python), "-c", _HELLOWORLD, str(ports[0])], core_agent)

    def js_compat(ports: list[int]) -> Launch:
        env = {"HTTP_PORT": str(ports[0]), "GRPC_PORT": str(ports[1])}
        return Launch([str(tsx), "agents/compat-v1-server/index.ts"], samples_js, env)

    def js_multi(ports: list[int]) -> Launch:
        env = {"HTTP_PORT": str(ports[0]), "GRPC_PORT": str(ports[1])}
        return Launch([str(tsx), "agents/multi-transport-agent/index.ts"], samples_js, env)

    def js_sample(ports: list[int]) -> Launch:
        return Launch(
            [str(tsx), "agents/sample-agent/index.ts"], samples_js, {"PORT": str(ports[0])}
        )

    def own(kind: str) -> Callable[[list[int]], Launch]:
        return lambda ports: Launch([sys.executable, "-c", _OWN, kind], ROOT)

    js_source = f"a2a-js {git_head(ext / 'a2a-js')}"
    tests_live = f"tests/live/agents.py {git_head(ROOT)}"
    return [
        AgentSpec(
            "tests/live sdk_agent 1.0 (a2a-sdk 1.3.0)",
            "tuned",
            tests_live,
            [],
            own("sdk-1.0"),
            announces=True,
        ),
        AgentSpec(
            "tests/live sdk_agent 0.3 (a2a-sdk 1.3.0)",
            "tuned",
            tests_live,
            [],
            own("sdk-0.3"),
            announces=True,
        ),
        AgentSpec(
            "tests/live handmade_agent", "tuned", tests_live, [], own("handmade"), announces=True
        ),
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
        AgentSpec(
            "a2a-tck 0.3.x python-sut tck_core_agent, a2a-sdk 0.3.0",
            "held-out",
            f"a2a-tck 0.3.x {git_head(ext / 'tck-0.3')}",
            [core_agent, hello["0.3"][1]],
            tck_core,
        ),
        AgentSpec("a2a-js compat-v1-server", "held-out", js_source, [tsx], js_compat, ports=2),
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
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE if spec.announces else log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if spec.announces:
            assert self.process.stdout is not None
            self.origin = self.process.stdout.readline().decode().strip() or self.origin
            threading.Thread(target=self._drain, daemon=True).start()
        self.card_url = self.origin + CARD_PATH
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

    def _drain(self) -> None:
        assert self.process.stdout is not None
        with self.log.open("ab") as log:
            for line in self.process.stdout:
                log.write(line)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

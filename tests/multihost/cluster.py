"""The registry deployed as several hosts on a private network (tests/multihost/network.py):

    postgres  198.18.0.2    PostgreSQL, the one primary
    redis     198.18.0.3    Redis: broker, cache, limits, locks
    web-a     198.18.0.11   the image's granian (:8000) and compose's protocols server (:8001)
    web-b     198.18.0.12   the same
    worker-1  198.18.0.21   a Celery worker (compose's command), metrics on :9100
    worker-2  198.18.0.22   the same
    beat      198.18.0.31   Celery beat
    agents    198.18.0.41   the agents' cards, one origin per port (agents_server.py)
    client    198.18.0.51+  people: each a source address of its own (relay.py)

Every registry node gets the same configuration (as compose's ``x-app`` gives every service)
and finds the others by the addresses in it: ``DATABASE_URL``, ``REDIS_URL``. The fetch
policy lets the crawlers reach the agents host and nothing else of the private range.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.multihost.hosts import (
    BIN,
    PYTHON,
    ROOT,
    Host,
    NamespacedPostgres,
    NamespacedRedis,
    eventually,
)
from tests.multihost.network import SUBNET, Network
from tests.serving_commands import compose_command, dockerfile_command, with_options

ADDRESSES: dict[str, tuple[int, ...]] = {
    "postgres": (2,),
    "redis": (3,),
    "web-a": (11,),
    "web-b": (12,),
    "worker-1": (21,),
    "worker-2": (22,),
    "beat": (31,),
    "beat-2": (32,),
    "agents": (41,),
    "client": tuple(range(51, 91)),
}
WEB_PORT, PROTOCOLS_PORT, METRICS_PORT = 8000, 8001, 9100
AGENT_PORTS = tuple(range(8080, 8090))
# Anonymous requests per client: under 40 a window, each node counts every request in Redis
# at once (registry/limits.py), so the shared budget is exact; an hour, so no window turns
# over during a test.
ANON_RATE = "30/hour"
# Short enough for a test to watch several sweeps, and to see a dead worker's crawls come
# back: its agents' leases run out (cards/scheduling.py), its politeness slots expire a third
# past the hard time limit (cards/politeness.py).
SWEEP_SECONDS = 2
LEASE_SECONDS = 20
RUNNING_LEASE_SECONDS = 10  # a running crawl's, renewed while it runs
TASK_SOFT_TIME_LIMIT, TASK_TIME_LIMIT = 10, 15

HERE = Path(__file__).resolve().parent

SET_UP = """
from io import StringIO
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
said = StringIO()
call_command("issue_token", "multihost-publisher", stdout=said)
print("token", said.getvalue().strip())
said = StringIO()
call_command("load_demo", stdout=said)
for line in said.getvalue().splitlines():
    print("demo", line.split()[-1], line.split()[-2])
"""


def metrics_available() -> bool:
    """Whether this checkout's workers serve their node's metrics (issue 38 part 1)."""
    return (ROOT / "registry" / "metrics.py").is_file() and (
        ROOT / "registry" / "metrics_worker.py"
    ).is_file()


class Cluster:
    """The deployment above, started host by host; ``close`` takes every piece down."""

    def __init__(
        self, base: Path, model_dir: Path | None, model_ready: Callable[[], None] = lambda: None
    ) -> None:
        self.base = base
        self.model_dir = model_dir
        self.model_ready = model_ready
        self.secret = "multihost-" + secrets.token_urlsafe(32)
        self.network = Network()
        self.hosts: dict[str, Host] = {}
        self.people: dict[str, str] = {}
        self._relays: dict[tuple[str, str, int], str] = {}
        self.postgres: NamespacedPostgres | None = None
        self.token = ""
        self.demo: dict[str, str] = {}

    # --- hosts ------------------------------------------------------------------------------

    def address(self, role: str) -> str:
        return f"{SUBNET}.{ADDRESSES[role][0]}"

    def _configuration(self) -> dict[str, str]:
        """What every registry node is told: where the others are, and the policies."""
        settings = {
            "DATABASE_URL": f"postgres://postgres@{self.address('postgres')}:5432/registry",
            "REDIS_URL": f"redis://{self.address('redis')}:6379/0",
            "DJANGO_SECRET_KEY": self.secret,
            "ALLOWED_HOSTS": f"127.0.0.1,localhost,{self.address('web-a')},{self.address('web-b')}",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "REGISTRY_FETCH_ALLOW_HTTP": "true",
            "REGISTRY_FETCH_ALLOWED_NETWORKS": f"{self.address('agents')}/32",
            "REGISTRY_ANON_RATE": ANON_RATE,
            "REGISTRY_SWEEP_INTERVAL_SECONDS": str(SWEEP_SECONDS),
            "REGISTRY_CRAWL_LEASE_SECONDS": str(LEASE_SECONDS),
            "REGISTRY_CRAWL_RUNNING_LEASE_SECONDS": str(RUNNING_LEASE_SECONDS),
            "REGISTRY_TASK_SOFT_TIME_LIMIT": str(TASK_SOFT_TIME_LIMIT),
            "REGISTRY_TASK_TIME_LIMIT": str(TASK_TIME_LIMIT),
            "REGISTRY_ORIGIN_MIN_GAP_SECONDS": "0",
            "REGISTRY_CRAWL_RETRY_BASE_SECONDS": "0.5",
            # The agents host serves cards, not A2A endpoints: no live checks of them.
            "REGISTRY_LIVE_CHECKS": "false",
            "REGISTRY_EMBEDDINGS": "auto",
        }
        if metrics_available():
            settings["REGISTRY_METRICS_ALLOW"] = f"{SUBNET}.0/24"
        return settings

    def host(self, role: str) -> Host:
        """The host ``role``, plugged in (again, after it was removed) with its own directory."""
        if role in self.hosts:
            return self.hosts[role]
        plug = self.network.plug(role, *ADDRESSES[role])
        directory = self.base / role
        directory.mkdir(parents=True, exist_ok=True)
        env: dict[str, str] = {}
        if role not in ("postgres", "redis", "agents", "client"):
            env = self._configuration()
            env["REGISTRY_EMBEDDING_DIR"] = str(directory / "embedding")
            env["PROMETHEUS_MULTIPROC_DIR"] = str(directory / "metrics")
        self.hosts[role] = host = Host(plug, directory, env)
        return host

    def remove(self, role: str) -> None:
        """Take host ``role`` off the network: cable out, processes killed, namespace gone."""
        host = self.hosts.pop(role, None)
        self.network.unplug(role)
        if host is not None:
            host.kill()
            shutil.rmtree(host.directory / "embedding", ignore_errors=True)  # its disk too
        self.network.remove(role)

    # --- the services -----------------------------------------------------------------------

    def start(self) -> None:
        host = self.host("postgres")
        self.postgres = NamespacedPostgres(host)
        self.postgres.start()
        self.postgres.create_database()
        NamespacedRedis(self.host("redis")).start()
        agents = self.host("agents")
        (agents.directory / "cards").mkdir(exist_ok=True)
        ports = [arg for port in AGENT_PORTS for arg in ("--port", str(port))]
        agents.spawn(
            "agents",
            [PYTHON, str(HERE / "agents_server.py"), "--directory", str(agents.directory / "cards"),
             "--address", agents.address, *ports],
        )  # fmt: skip
        agents.wait_for_log("agents", "agents server ready", timeout=30)
        self.host("client")
        # Set up once from web-a, as an operator would from any node: migrate, one account's
        # token, the demo agents (one process: each Django start costs seconds of CPU). The
        # servers and workers start meanwhile (none reads the database before it is asked);
        # the beat, which would send sweeps at once, only after.
        web_a = self.host("web-a")
        setting_up = subprocess.Popen(
            ["ip", "netns", "exec", web_a.plug.ns, PYTHON, str(ROOT / "manage.py"), "shell",
             "-c", SET_UP],
            cwd=web_a.directory, env=web_a.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            for role in ("web-a", "web-b", "worker-1", "worker-2"):
                self.boot(role, wait=False)
            said, errors = setting_up.communicate(timeout=600)
        finally:
            if setting_up.poll() is None:
                setting_up.kill()
                setting_up.wait()
        assert setting_up.returncode == 0, f"set-up failed:\n{said}{errors}"
        for line in said.splitlines():
            words = line.split()
            if words[:1] == ["token"]:
                self.token = words[1]
            elif len(words) == 3 and words[0] == "demo":
                self.demo[words[1]] = words[2]
        assert self.token and "weather" in self.demo, said
        self.boot("beat", wait=False)
        for role in ("web-a", "web-b", "worker-1", "worker-2", "beat"):
            self.ready(role)

    def boot(self, role: str, *, wait: bool = True) -> None:
        """Start what ``role`` runs (a web node's two servers, a worker, a beat)."""
        host = self.host(role)
        embedding = Path(host.env["REGISTRY_EMBEDDING_DIR"])
        if self.model_dir is not None and not embedding.exists():
            self.model_ready()
            # The converted model, as an image would carry it: this host's own copy.
            shutil.copytree(self.model_dir, embedding)
        if role.startswith("web"):
            granian = with_options(dockerfile_command(), port=str(WEB_PORT), workers="1")
            # As the image sets it (Dockerfile's ENV): granian's own lines follow the log format.
            log_config = str(ROOT / "granian-logging.json")
            host.spawn("web", [str(BIN / "granian"), *granian[1:]], GRANIAN_LOG_CONFIG=log_config)
            protocols = with_options(compose_command("protocols"), bind=f"0.0.0.0:{PROTOCOLS_PORT}")
            protocols = [str(ROOT / "gunicorn.conf.py") if w == "gunicorn.conf.py" else w
                         for w in protocols]  # fmt: skip
            host.spawn(
                "protocols",
                [PYTHON, "-m", "gunicorn", *protocols[1:]],
                REGISTRY_DB_POOL="true",
                GUNICORN_WORKERS="1",
            )
        elif role.startswith("worker"):
            extra = {}
            if metrics_available():
                extra = {"REGISTRY_METRICS_PORT": str(METRICS_PORT),
                         "REGISTRY_METRICS_ADDRESS": host.address}  # fmt: skip
            # compose's worker command, named after its host.
            host.spawn(
                "worker",
                [str(BIN / "celery"), "-A", "registry", "worker", "--loglevel=INFO",
                 "--concurrency=2", "-n", f"{role}@%h"],
                **extra,
            )  # fmt: skip
        elif role.startswith("beat"):
            host.spawn(
                "beat",
                [str(BIN / "celery"), "-A", "registry", "beat", "--loglevel=INFO",
                 "--schedule", str(host.directory / "celerybeat-schedule")],
            )  # fmt: skip
        if wait:
            self.ready(role)

    def ready(self, role: str) -> None:
        host = self.hosts[role]
        if role.startswith("web"):
            for port in (WEB_PORT, PROTOCOLS_PORT):
                base = self.url(role, port, person="probe")

                def answers(base: str = base) -> bool:
                    try:
                        return httpx.get(base + "/healthz", timeout=3).status_code == 200
                    except httpx.HTTPError:
                        return False

                eventually(answers, 120, f"{role}:{port} did not answer /healthz")
        elif role.startswith("worker"):
            host.wait_for_log("worker", " ready.", timeout=120)
        elif role.startswith("beat"):
            host.wait_for_log("beat", "beat: Starting", timeout=120)

    def running(self, role: str) -> bool:
        host = self.hosts.get(role)
        return (
            host is not None
            and bool(host.processes)
            and all(process.poll() is None for process in host.processes.values())
        )

    def ensure(self, *roles: str) -> None:
        """Bring back any of ``roles`` an earlier test stopped or removed."""
        for role in roles:
            if not self.running(role):
                if role in self.hosts:
                    self.hosts[role].kill()
                self.boot(role)

    # --- talking to the hosts ---------------------------------------------------------------

    def person(self, name: str) -> str:
        """The source address of client ``name`` (each person has one of their own)."""
        if name not in self.people:
            self.people[name] = f"{SUBNET}.{ADDRESSES['client'][len(self.people)]}"
        return self.people[name]

    def url(self, role: str, port: int = WEB_PORT, *, person: str = "reader") -> str:
        """A base URL in this process that reaches ``role:port`` as ``person`` would."""
        key = (person, role, port)
        if key not in self._relays:
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(128)
            local_port = listener.getsockname()[1]
            client = self.hosts["client"]
            process = subprocess.Popen(
                ["ip", "netns", "exec", client.plug.ns, PYTHON, str(HERE / "relay.py"),
                 "--fd", str(listener.fileno()), "--target", f"{self.address(role)}:{port}",
                 "--source", self.person(person)],
                env=client.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(listener.fileno(),), start_new_session=True,
            )  # fmt: skip
            listener.close()  # the relay holds it now
            client.processes[f"relay-{person}-{role}-{port}-{process.pid}"] = process
            self._relays[key] = f"http://127.0.0.1:{local_port}"
        return self._relays[key]

    # --- the agents host --------------------------------------------------------------------

    def publish(self, name: str, card: dict[str, Any], *, port: int, delay: float = 0) -> str:
        """Serve ``card`` on the agents host; its URL (slow by ``delay`` seconds)."""
        cards = self.hosts["agents"].directory / "cards"
        (cards / f"{name}.json").write_text(json.dumps(card))
        slow = f"/slow/{delay:g}" if delay else ""
        return f"http://{self.address('agents')}:{port}{slow}/{name}.json"

    def fetches(self, name: str, *, at: str = "end") -> list[dict[str, Any]]:
        """The agents host's journal lines for card ``name`` (``at``: start or end)."""
        journal = self.hosts["agents"].directory / "cards" / "requests.jsonl"
        lines = [json.loads(line) for line in journal.read_text().splitlines() if line]
        return [
            line for line in lines if line["at"] == at and line["path"].endswith(f"/{name}.json")
        ]

    # --- the end ----------------------------------------------------------------------------

    def close(self) -> None:
        # The registry's nodes first, the services they use last (no reconnection noise).
        for host in reversed(self.hosts.values()):
            host.kill()
        if self.postgres is not None:
            self.postgres.close()  # its data directory (the cluster is killed with its host)
        self.network.close()
        for host in self.hosts.values():  # caches (the model's copies): only the logs stay
            shutil.rmtree(host.directory / "embedding", ignore_errors=True)
        self.hosts.clear()

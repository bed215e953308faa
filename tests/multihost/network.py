"""A private network of hosts: one Linux network namespace per host, joined by a bridge that
lives in a namespace of its own (the "switch").

Every name this suite makes in the kernel's global view is a namespace called
``rmh<pid>-<role>``: the pid of the pytest process that made it, so a run can tell its own
leftovers from those of a run still going. Links are created inside the namespaces (a veth's
two ends go straight into a host and the switch), so the root namespace never holds a link,
an address or a route of ours, even for a moment. There is no route out: addresses are in
198.18.0.0/24 (RFC 2544's benchmarking range) and no namespace has a default route, so
packets only travel between the suite's own namespaces. Deleting a namespace deletes its
links, the veth peers in the switch with them, and the switch's namespace takes the bridge.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

PREFIX = "rmh"
SUBNET = "198.18.0"  # /24
_NAME = re.compile(rf"^{PREFIX}(\d+)-")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


def unavailable_reason() -> str | None:
    """Why this machine cannot build the network (None when it can): no ``ip``, not root, or
    the kernel refuses (EPERM in a container without CAP_SYS_ADMIN)."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root (`ip netns add`)"
    probe = f"{PREFIX}{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip() or made.stdout.strip()}"
    try:
        veth = _ip(
            "link", "add", "probe0", "netns", probe, "type", "veth", "peer", "name", "probe1",
            "netns", probe,
            check=False,
        )  # fmt: skip
        if veth.returncode != 0:
            return f"veth pairs cannot be made: {veth.stderr.strip()}"
    finally:
        _ip("netns", "del", probe, check=False)
    return None


def namespaces() -> list[str]:
    """Every network namespace on the machine (``ip netns list``), by name."""
    listing = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_everything_in(ns: str) -> None:
    """SIGKILL every process whose network namespace is ``ns`` (``ip netns pids``): the ones
    this suite started and anything they left behind (a daemonised postmaster)."""
    for _ in range(20):
        pids = [int(p) for p in _ip("netns", "pids", ns, check=False).stdout.split() if p.isdigit()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove(ns: str) -> None:
    """Kill what runs in ``ns``, then delete it (with its links)."""
    kill_everything_in(ns)
    _ip("netns", "del", ns, check=False)


def sweep_leftovers() -> list[str]:
    """Delete the namespaces of earlier runs that died without cleaning up (their pytest
    process is gone); a run still going keeps its own. Returns what was removed."""
    removed = []
    for ns in namespaces():
        match = _NAME.match(ns)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            remove(ns)
            removed.append(ns)
    return removed


def ours() -> list[str]:
    """The namespaces this process made and has not deleted yet."""
    return [ns for ns in namespaces() if ns.startswith(f"{PREFIX}{os.getpid()}-")]


@dataclass(frozen=True)
class Plug:
    """One host's place on the network: its namespace, its addresses (the first is its own)."""

    role: str
    ns: str
    addresses: tuple[str, ...]

    @property
    def address(self) -> str:
        return self.addresses[0]


class Network:
    """The switch and the hosts plugged into it. ``close`` deletes every namespace it made."""

    def __init__(self) -> None:
        self.tag = f"{PREFIX}{os.getpid()}"
        self.switch = f"{self.tag}-switch"
        self.plugs: dict[str, Plug] = {}
        self._made: list[str] = []
        self._add_namespace(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")

    def _add_namespace(self, ns: str) -> None:
        _ip("netns", "add", ns)
        self._made.append(ns)
        _ip("-n", ns, "link", "set", "lo", "up")

    def plug(self, role: str, *hosts: int) -> Plug:
        """A new host ``role`` with addresses ``198.18.0.<h>`` for each ``h`` of ``hosts``,
        cabled to the switch (port ``v-<role>``)."""
        ns = f"{self.tag}-{role}"
        port = f"v-{role}"[:15]
        self._add_namespace(ns)
        _ip(
            "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port,
            "netns", self.switch,
        )  # fmt: skip
        _ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
        addresses = tuple(f"{SUBNET}.{h}" for h in hosts)
        for address in addresses:
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        plug = Plug(role=role, ns=ns, addresses=addresses)
        self.plugs[role] = plug
        return plug

    def unplug(self, role: str) -> None:
        """Pull the host's cable out of the switch: its packets go nowhere from now on, and
        nothing it had open hears a goodbye (no FIN, no RST)."""
        _ip("-n", self.switch, "link", "del", f"v-{role}"[:15], check=False)

    def remove(self, role: str) -> None:
        """Take the host off the network for good: its processes killed, its namespace gone."""
        plug = self.plugs.pop(role, None)
        if plug is not None:
            remove(plug.ns)
            with contextlib.suppress(ValueError):
                self._made.remove(plug.ns)

    def close(self) -> None:
        # Hosts first, the switch (and its bridge) last.
        for ns in [*reversed(self._made)]:
            remove(ns)
        self._made.clear()
        self.plugs.clear()

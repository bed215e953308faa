"""A card whose server holds the first request, and a worker killed outright: crawls cut off in
the middle (tests/test_crawl_resume.py, tests/faults/test_redis_outages.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from typing import Any

from tests.factories import minimal_card
from tests.support import CardServer, Reply


class HeldCard:
    """A card whose first request is held until :meth:`release` (or 60 s)."""

    def __init__(self, card_server: CardServer, name: str) -> None:
        self.body = json.dumps(minimal_card(name=name)).encode()
        self.first = threading.Event()
        self.released = threading.Event()
        self.calls = 0
        self.url = card_server.url(f"/{name.lower()}.json")
        card_server.routes[f"/{name.lower()}.json"] = self.answer

    def answer(self, handler: Any) -> Reply:
        self.calls += 1
        if self.calls == 1:
            self.first.set()
            self.released.wait(60)
        return Reply(body=self.body)

    def release(self) -> None:
        self.released.set()


def kill_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the worker's main process and its pool's children: nothing acknowledges,
    nothing rejects, nothing gives a lease back."""
    children = subprocess.run(
        ["pgrep", "-P", str(worker.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children, "no pool process found"
    os.kill(worker.pid, signal.SIGKILL)
    for pid in children:
        os.kill(int(pid), signal.SIGKILL)
    worker.wait(10)

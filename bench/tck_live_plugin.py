"""A pytest plugin for the A2A TCK's 1.0-dev branch, loaded by bench/live_tck_compare.py with
``-p tck_live_plugin``. It changes no verdict; it does two things:

1. The TCK's JSON-RPC client posts to the interface URL exactly as the card declares it. The
   TCK's ``JsonRpcClient`` is an ``httpx.Client(base_url=<interface url>)`` that posts to
   ``"/"``; httpx joins that to the base URL's path with a slash, so an interface declared at
   ``http://host/a2a/jsonrpc`` receives its requests at ``/a2a/jsonrpc/``, a path the agent
   never declared (a2a-sdk answers 404 or a redirect there), and every verdict about it would
   be about that wrong path. One request hook on each client sends a request for
   ``<declared path>/`` to ``<declared path>``; interfaces at a root URL are untouched.
   ``TCK_JSONRPC_AS_IS=1`` leaves the client as the TCK has it.
2. Every result the TCK records (requirement id, transport, passed, skipped, errors, test) is
   written to the file named by ``TCK_RESULTS_JSON`` at the end of the session. The TCK's own
   compatibility report keeps, per requirement and transport, only the result recorded last
   (an earlier failure on the same transport is overwritten), so the comparison reads these
   records instead.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

_COLLECTORS: list[Any] = []


def pytest_configure(config: Any) -> None:
    if os.environ.get("TCK_JSONRPC_AS_IS"):
        return  # the TCK's own behaviour, to measure what the slash does
    module = importlib.import_module("tck.transport.jsonrpc_client")
    client_class = module.JsonRpcClient
    if getattr(client_class, "_declared_url_hook", False):
        return
    original = client_class.__init__

    def __init__(self: Any, base_url: str) -> None:  # noqa: N807 - replaces the class's own
        original(self, base_url)
        declared_path = self._client.base_url.path.rstrip("/")

        def to_declared_path(request: Any) -> None:
            if declared_path and request.url.path == declared_path + "/":
                request.url = request.url.copy_with(path=declared_path)

        self._client.event_hooks["request"].append(to_declared_path)

    client_class.__init__ = __init__
    client_class._declared_url_hook = True


@pytest.fixture(scope="session", autouse=True)
def _keep_collector(compatibility_collector: Any) -> Iterator[None]:
    _COLLECTORS.append(compatibility_collector)
    yield


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    path = os.environ.get("TCK_RESULTS_JSON")
    if not path or not _COLLECTORS:
        return
    records = [asdict(result) for result in _COLLECTORS[0].get_results()]
    with open(path, "w") as out:
        json.dump(records, out)

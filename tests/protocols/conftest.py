"""A live registry (registry.asgi under uvicorn, in a thread) on 127.0.0.1, test database."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from tests.factories import agent_from_card, minimal_card

FIGHT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
SCHEMAS_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def live_registry(transactional_db: None) -> Iterator[str]:
    import uvicorn

    from registry.asgi import application

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="on", log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the registry did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        # The server's database connection lives in asgiref's thread-sensitive executor.
        asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


@pytest.fixture
def fight_agent(transactional_db: None) -> Any:
    card = minimal_card(
        name="Fight judge",
        description="Decides who would win a fight.",
        capabilities={"streaming": False, "extensions": [{"uri": SCHEMAS_URI}]},
        schemas={"fightComparison": FIGHT},
        skills=[
            {
                "id": "fight-comparison",
                "name": "Fight Comparison",
                "description": "Who would win a fight.",
                "tags": ["fight"],
                "inputModes": ["text/plain", "application/json;schema=fightComparison"],
                "outputModes": ["text/plain"],
            }
        ],
    )
    return agent_from_card(card)

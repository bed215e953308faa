from __future__ import annotations

from collections.abc import Iterator

import pytest

from cards.signatures import JwksSource
from tests.signatures.helpers import LOOPBACK_POLICY
from tests.support import CardServer, running_server


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def site() -> Iterator[CardServer]:
    """The agent's own origin."""
    with running_server("127.0.0.1") as server:
        yield server


@pytest.fixture
def other_site() -> Iterator[CardServer]:
    """A second origin (another loopback address): somebody else's host."""
    with running_server("127.0.0.2") as server:
        yield server


@pytest.fixture
def source() -> JwksSource:
    return JwksSource(policy=LOOPBACK_POLICY)

from __future__ import annotations

import ipaddress
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.parallel import (
    RedisInUse,
    drop_left_behind,
    lock_redis_databases,
    process_alive,
    with_run_suffix,
    worker_environment,
    worker_index,
)
from tests.support import SHARED, CardServer, running_server

# Fixtures that start real Celery workers, shared by the end-to-end modules.
pytest_plugins = ["tests.workers"]

LOOPBACK = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]

# Every test server listens on 127.0.0.1, one destination to the politeness gate
# (registry/http/gate.py): with its production gap and hourly ceiling, the suite's requests would
# queue behind each other. Off here and in every server and worker the tests start (they
# inherit this environment); tests/test_politeness_gate.py turns it on.
os.environ.setdefault("REGISTRY_ORIGIN_MIN_GAP_SECONDS", "0")
os.environ.setdefault("REGISTRY_DESTINATION_MIN_GAP_SECONDS", "0")
os.environ.setdefault("REGISTRY_DESTINATION_HOURLY_LIMIT", "0")


TESTS = Path(__file__).resolve().parent
FAULTS = TESTS / "faults"

# Sweeps, slow by nature (minutes, not seconds), marked ``slow``: `make test` leaves them to
# `make test-slow`, which CI runs too. So is every test that drives Chromium (the ``browser``
# fixture of tests/test_browser.py). A single slow test elsewhere takes ``@pytest.mark.slow``.
SLOW = {
    TESTS / "test_contract.py",  # schemathesis: every operation, 40 examples each
    TESTS / "test_every_door.py",  # hostile input on every route of a live registry
    TESTS / "api" / "test_deep_pages.py",  # 2,600 agents seeded for each query plan pinned
    TESTS / "search" / "test_snapshot_distribution.py",  # five processes, each converts the model
}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Under pytest-xdist (`make test`), before a worker starts pytest: its own Redis database
    in its environment, read by its settings and inherited by what it starts (tests/parallel.py)."""
    changes = worker_environment(os.environ, worker_index(node.workerinput["workerid"]))
    node.workerinput["controller_redis_url"] = os.environ.get("REDIS_URL", "")
    node.workerinput["registry_run"] = os.getpid()  # the run's test databases carry it
    if changes:
        node.gateway.remote_exec(f"import os\nos.environ.update({changes!r})").waitclose()


_REDIS_LOCKS = pytest.StashKey[list[Any]]()


def pytest_configure(config: pytest.Config) -> None:
    """In the run's first process (the xdist controller, or the only one): hold the Redis
    databases the run will use, or stop at once saying which variable gives others, when
    another run on this machine holds one (tests/parallel.py). A collection touches none."""
    url = os.environ.get("REDIS_URL", "")
    if hasattr(config, "workerinput") or config.option.collectonly or not url:
        return
    workers = int(config.getoption("numprocesses", 0) or 0)
    try:
        config.stash[_REDIS_LOCKS] = lock_redis_databases(url, workers)
    except RedisInUse as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, request: pytest.FixtureRequest
) -> None:
    """pytest-django's worker suffix (``test_registry_gw0``), then the run's own
    (``_run<controller pid>``), so a run beside another on the same PostgreSQL never meets its
    databases; databases of runs whose process is gone are dropped first (tests/parallel.py).
    With ``--reuse-db`` the names stay as pytest-django makes them."""
    from django.conf import settings

    if request.config.getoption("reuse_db", False):
        return
    workerinput = getattr(request.config, "workerinput", {})
    run = int(workerinput.get("registry_run", os.getpid()))
    for alias in settings.DATABASES:
        database = settings.DATABASES[alias]
        if "postgresql" not in database["ENGINE"]:
            continue
        test = database.setdefault("TEST", {})
        base = f"test_{database['NAME']}"
        drop_left_behind(database, base, process_alive)
        test["NAME"] = with_run_suffix(test.get("NAME") or base, run)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Everything under tests/faults/ is ``disruptive`` (it stops and kills the private
    PostgreSQL and Redis those tests start; `make test-faults`), and runs after everything else.
    The modules of ``SLOW`` and the tests in a browser are ``slow`` (`make test-slow`)."""
    for item in items:
        path = Path(str(item.path))
        if FAULTS in path.parents:
            item.add_marker(pytest.mark.disruptive)
        if path in SLOW or "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Throttle counters and cached JWKS documents must not leak from one test to the next."""
    from django.core.cache import cache

    from registry import limits

    cache.clear()
    limits.reset()
    yield


@pytest.fixture(autouse=True)
def _no_live_checks_after_crawls(settings: Any) -> None:
    """Crawls in tests do not go on to ask the agents' endpoints (live/): tests that count what
    a card server received would see the checks' requests. tests/live turns them back on."""
    settings.REGISTRY_LIVE_CHECKS = False


@pytest.fixture(autouse=True)
def _fresh_vector_index() -> None:
    """Each test's searches read the vectors its own agents have. The process's index looks
    for new rows at most once a second, so a search in the first second of a test could
    otherwise answer from the rows of the test before (rolled back since): the demo agents of
    tests/ard were missing after tests/api/test_malformed_input.py asked a question."""
    from search.index import vectors

    vectors.reset()


@pytest.fixture(autouse=True)
def _limiter_clock_at_a_window_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limiter's clock runs at real speed but starts each test one second into an hour, so
    a test that proves "3/minute" never sees its window turn over half way (the limiter counts
    in fixed windows, and CI once crossed a minute between the third and fourth request)."""
    from registry import limits

    real = time.time
    offset = (real() // 3600 + 1) * 3600 + 1 - real()
    monkeypatch.setattr(limits, "clock", lambda: real() + offset)


@pytest.fixture(autouse=True)
def _no_politeness_gate(settings: Any) -> None:
    """The gate off (see above; the settings were read before this module set the environment),
    and this process's memory of it empty."""
    from registry.http import gate

    settings.REGISTRY_ORIGIN_MIN_GAP_SECONDS = 0
    settings.REGISTRY_DESTINATION_MIN_GAP_SECONDS = 0
    settings.REGISTRY_DESTINATION_HOURLY_LIMIT = 0
    gate.reset_memory()


@pytest.fixture(autouse=True)
def _generous_client_limits(settings: Any) -> None:
    """Suites make thousands of anonymous requests from one address; tests/test_limits.py
    sets the limits it proves."""
    settings.REGISTRY_ANON_RATE = "1000000/minute"


@pytest.fixture
def card_server() -> Iterator[CardServer]:
    with running_server() as server:
        yield server


@pytest.fixture
def loopback_allowed(settings: Any) -> None:
    """Let the fetcher reach servers on this machine, as a development setup would."""
    settings.REGISTRY_FETCH_ALLOW_HTTP = True
    settings.REGISTRY_FETCH_ALLOWED_NETWORKS = LOOPBACK
    settings.REGISTRY_FETCH_CONNECT_TIMEOUT = 2.0
    settings.REGISTRY_FETCH_READ_TIMEOUT = 3.0
    settings.REGISTRY_FETCH_TOTAL_TIMEOUT = 5.0


@pytest.fixture
def user(db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="publisher")


@pytest.fixture
def token(user: Any) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.create(user=user).key


@pytest.fixture
def client_anon() -> APIClient:
    return APIClient()


@pytest.fixture
def client_auth(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


@pytest.fixture
def shared_dir() -> Any:
    if not SHARED.is_dir():
        pytest.skip(
            f"{SHARED} is absent: the shared corpus and seeds are only on the project's machines"
        )
    return SHARED

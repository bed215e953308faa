"""Fixtures of the fault tests: private PostgreSQL and Redis, the registry's processes on them.

These tests are ``disruptive`` (tests/conftest.py marks everything in this directory): they
stop, kill and restart services, always instances they started themselves on free ports.
`make test` leaves them out; `make test-faults` runs them (and `.ci/run` does both).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.services import (
    PrivatePostgres,
    PrivateRedis,
    Registry,
    postgres_unavailable_reason,
    private_services,
)


@pytest.fixture(scope="session")
def _private_services() -> Iterator[tuple[PrivatePostgres, PrivateRedis, dict[str, str]]]:
    reason = postgres_unavailable_reason()
    if reason is not None:
        pytest.skip(f"no private PostgreSQL for the fault tests: {reason}")
    if shutil.which("redis-server") is None:
        pytest.skip("no private Redis for the fault tests: redis-server is not installed")
    with private_services() as (postgres, redis):
        # Migrate once for the session, and make one account; each test starts its own processes.
        setup = Registry(postgres, redis, Path(postgres.root))
        setup.manage("migrate", "--noinput")
        token = setup.manage("issue_token", "faults-publisher")
        demo = dict(line.split()[::-1][:2] for line in setup.manage("load_demo").splitlines())
        yield postgres, redis, {"token": token, "weather": demo["weather"]}


@pytest.fixture
def private_postgres(
    _private_services: tuple[PrivatePostgres, PrivateRedis, dict[str, str]],
) -> Iterator[PrivatePostgres]:
    postgres = _private_services[0]
    yield postgres
    # A test may leave it stopped or killed: the next one finds it running.
    if not (postgres.data / "postmaster.pid").exists():
        postgres.start()


@pytest.fixture
def private_redis(
    _private_services: tuple[PrivatePostgres, PrivateRedis, dict[str, str]],
) -> Iterator[PrivateRedis]:
    redis = _private_services[1]
    yield redis
    redis.resume()
    if redis.process is None:
        redis.start()


@pytest.fixture
def publisher_token(_private_services: tuple[PrivatePostgres, PrivateRedis, dict[str, str]]) -> str:
    return _private_services[2]["token"]


@pytest.fixture
def weather_agent(_private_services: tuple[PrivatePostgres, PrivateRedis, dict[str, str]]) -> str:
    """The id of the demo agent Weatherly (``manage.py load_demo``)."""
    return _private_services[2]["weather"]


@pytest.fixture
def stack(
    private_postgres: PrivatePostgres, private_redis: PrivateRedis, tmp_path: Path
) -> Iterator[Registry]:
    """The registry's processes for one test (their logs in the test's tmp_path)."""
    registry = Registry(private_postgres, private_redis, tmp_path)
    try:
        yield registry
    finally:
        registry.close()

"""One client, one budget: per-client limits count a canonical key, not the text of an address
(issue 35.4). IPv4 by address (``::ffff:`` forms folded), IPv6 by its /64 network
(``REGISTRY_THROTTLE_IPV6_PREFIX``), whatever spelling the client or its proxy used.

The anonymous limit is proved on the production server (the Dockerfile's granian command, two
workers counting in Redis) behind a trusted proxy, as the issue measured it; the login throttle
and the submissions throttle through the test client, as their own tests do."""

from __future__ import annotations

import http.client
import ipaddress
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from registry.limits import client_key
from tests.serving_commands import ROOT, granian_command, running, server_environment
from tests.support import free_port

RATE = 20  # a minute


def random_net64() -> ipaddress.IPv6Network:
    """A /64 of the documentation prefix no earlier run of this test has counted in Redis."""
    return ipaddress.IPv6Network((0x20010DB8 << 96 | random.getrandbits(32) << 64, 64))


def random_ipv4() -> ipaddress.IPv4Address:
    """An address of 198.18.0.0/15 (benchmarking; never a real client)."""
    return ipaddress.IPv4Address(0xC6120000 | random.getrandbits(17))


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("2001:db8::1", "2001:db8::/64"),
        ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::/64"),
        ("2001:db8:0:0:ffff:ffff:ffff:ffff", "2001:db8::/64"),
        ("2001:db8:0:1::1", "2001:db8:0:1::/64"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("::FFFF:c000:0201", "192.0.2.1"),
        ("192.0.2.1", "192.0.2.1"),
        ("unix:/run/socket", "unix:/run/socket"),
        ("", ""),
    ],
)
def test_each_spelling_of_a_client_has_one_key(spelling: str, key: str) -> None:
    assert client_key(spelling) == key


def test_the_ipv6_prefix_is_a_setting(settings: Any) -> None:
    settings.REGISTRY_THROTTLE_IPV6_PREFIX = 128
    assert client_key("2001:db8::1") != client_key("2001:db8::2")
    assert client_key("2001:0db8::0001") == "2001:db8::1/128"
    settings.REGISTRY_THROTTLE_IPV6_PREFIX = 48
    assert client_key("2001:db8:0:1::1") == client_key("2001:db8:0:2::1") == "2001:db8::/48"


@pytest.mark.parametrize("value", ["0", "129", "64bits"])
def test_a_bad_ipv6_prefix_stops_the_start(value: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "registry.settings",
            "REGISTRY_THROTTLE_IPV6_PREFIX": value,
        },
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "REGISTRY_THROTTLE_IPV6_PREFIX must be" in result.stderr


@pytest.fixture(scope="module")
def limited_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The production server behind a trusted proxy (127.0.0.1) with 20 requests a minute."""
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("two workers share their counts through Redis: REDIS_URL is needed")
    port = free_port()
    directory = tmp_path_factory.mktemp("client-key")
    env = server_environment(
        directory,
        REDIS_URL=redis_url,
        REGISTRY_ANON_RATE=f"{RATE}/minute",
        REGISTRY_TRUSTED_PROXIES="127.0.0.1/32",
    )
    with running(
        granian_command(port), env, directory / "server.log", port=port, booting="Started worker"
    ):
        yield port


def answered(port: int, forwarded_for: list[str]) -> int:
    """How many of the requests (one per ``X-Forwarded-For`` value, from the trusted proxy)
    were answered rather than refused 429. A path nobody serves: the limit applies to every
    route, and a 404 needs no database."""
    count = 0
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        for address in forwarded_for:
            connection.request("GET", "/api/v1/no-such-thing", headers={"X-Forwarded-For": address})
            response = connection.getresponse()
            response.read()
            assert response.status in (404, 429), response.status
            count += response.status != 429
    finally:
        connection.close()
    return count


@pytest.fixture
def one_window() -> None:
    """The limiter counts in fixed minutes: start with time left in this one."""
    left = 60 - time.time() % 60
    if left < 20:
        time.sleep(left + 0.5)


def test_forty_addresses_of_one_64_share_one_budget(limited_port: int, one_window: None) -> None:
    """The issue: 40 addresses of one /64, 3 requests each, had 120 of 120 answered."""
    net = random_net64()
    addresses = [str(net[random.getrandbits(64)]) for _ in range(40)]
    assert answered(limited_port, addresses * 3) == RATE
    # Another /64 is another client.
    assert answered(limited_port, [str(random_net64()[1])]) == 1


def test_other_spellings_of_one_address_share_its_budget(
    limited_port: int, one_window: None
) -> None:
    net = random_net64()
    host = net[1]
    spellings = [str(host), host.exploded, host.exploded.upper(), str(host).replace("::", ":0:0::")]
    assert len(set(spellings)) == 4
    assert answered(limited_port, spellings * 10) == RATE
    ipv4 = random_ipv4()
    mapped = [str(ipv4), f"::ffff:{ipv4}", str(ipaddress.IPv6Address(f"::ffff:{ipv4}"))]
    assert answered(limited_port, mapped * 10) == RATE
    assert answered(limited_port, [str(random_ipv4())]) == 1


def test_failed_logins_from_one_64_count_as_one_client(db: None, settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.REGISTRY_LOGIN_FAILURES_PER_CLIENT = 5
    net = random_net64()
    for number in range(5):
        Client(REMOTE_ADDR=str(net[number + 1])).post(
            "/admin/login/?next=/admin/", {"username": f"user{number}", "password": "guess"}
        )
    page = Client(REMOTE_ADDR=str(net[999])).post(
        "/admin/login/?next=/admin/", {"username": "someone", "password": "guess"}
    )
    assert "Too many failed logins" in page.content.decode()
    elsewhere = Client(REMOTE_ADDR=str(random_net64()[1])).post(
        "/admin/login/?next=/admin/", {"username": "someone", "password": "guess"}
    )
    assert "Too many failed logins" not in elsewhere.content.decode()


def test_the_submissions_throttle_believes_only_trusted_proxies() -> None:
    """DRF's own ``get_ident`` takes any ``X-Forwarded-For`` at its word; ours is the limits'
    client."""
    from django.test import RequestFactory
    from rest_framework.request import Request

    from registry.throttling import SubmissionRateThrottle

    request = Request(
        RequestFactory().get("/", REMOTE_ADDR="::ffff:203.0.113.5", HTTP_X_FORWARDED_FOR="1.2.3.4")
    )
    assert SubmissionRateThrottle().get_ident(request) == "203.0.113.5"

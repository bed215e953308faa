"""The address and host-name policy: pure functions, no traffic."""

from __future__ import annotations

import ipaddress

import pytest

from registry.http.addresses import address_refusal, host_refusal, parse_ip_literal

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))

# Each of these must be refused; several are "global" to CPython 3.11's ipaddress.
REFUSED_LITERALS = [
    "::ffff:127.0.0.1",  # IPv4-mapped loopback (not is_loopback on 3.11.7)
    "::ffff:10.0.0.1",  # IPv4-mapped private
    "::127.0.0.1",  # IPv4-compatible (is_global on 3.11.7)
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "ff02::1",  # multicast
    "192.0.0.8",  # IETF protocol assignments
    "192.88.99.1",  # 6to4 relay anycast
    "100.100.100.200",  # CGNAT, Alibaba Cloud metadata
    "fe80::1%eth0",  # scoped link-local
    "169.254.169.254",  # cloud metadata, link-local
    "0.0.0.0",
    "::",
    "::1",
    "127.0.0.1",
    "10.0.0.5",
    "172.16.3.4",
    "192.168.1.1",
    "198.18.0.1",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "2001:db8::1",
    "2001::1",  # Teredo
    "100::1",
    "203.0.113.7",  # documentation (TEST-NET-3)
]

# Legacy forms that resolvers turn into 127.0.0.1 without DNS.
LOOPBACK_SPELLINGS = ["2130706433", "0177.0.0.1", "0x7f000001", "0x7f.0.0.1", "127.1", "127.0.1"]

PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2001:4860:4860::8888"]


@pytest.mark.parametrize("literal", REFUSED_LITERALS)
def test_it_refuses_special_purpose_addresses(literal: str) -> None:
    reason = address_refusal(ipaddress.ip_address(literal))
    assert reason is not None
    assert " is " in reason


@pytest.mark.parametrize("literal", REFUSED_LITERALS)
def test_it_refuses_the_same_addresses_as_url_hosts(literal: str) -> None:
    assert host_refusal(literal) is not None
    if ":" in literal:
        assert host_refusal(f"[{literal.replace('%', '%25')}]") is not None


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_it_reads_legacy_ipv4_spellings_as_the_address_they_reach(spelling: str) -> None:
    assert parse_ip_literal(spelling) == ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_it_refuses_legacy_spellings_of_loopback(spelling: str) -> None:
    assert host_refusal(spelling) == "127.0.0.1 is a loopback address"


@pytest.mark.parametrize("literal", PUBLIC)
def test_it_allows_public_addresses(literal: str) -> None:
    assert address_refusal(ipaddress.ip_address(literal)) is None
    assert host_refusal(literal) is None


def test_it_names_the_address_and_its_kind_in_the_reason() -> None:
    assert address_refusal(ipaddress.ip_address("10.0.0.5")) == "10.0.0.5 is a private address"
    assert address_refusal(ipaddress.ip_address("127.0.0.1")) == "127.0.0.1 is a loopback address"
    mapped = address_refusal(ipaddress.ip_address("::ffff:127.0.0.1"))
    assert mapped is not None and "127.0.0.1" in mapped and "loopback" in mapped


def test_it_allows_addresses_inside_the_allowed_networks() -> None:
    assert address_refusal(ipaddress.ip_address("127.0.0.1"), LOOPBACK) is None
    assert address_refusal(ipaddress.ip_address("::1"), LOOPBACK) is None


def test_it_unwraps_mapped_addresses_before_the_allow_list() -> None:
    assert address_refusal(ipaddress.ip_address("::ffff:127.0.0.1"), LOOPBACK) is None
    assert address_refusal(ipaddress.ip_address("::ffff:10.0.0.1"), LOOPBACK) is not None


def test_it_refuses_scoped_addresses_even_when_their_network_is_allowed() -> None:
    allowed = (ipaddress.ip_network("fe80::/10"),)
    assert address_refusal(ipaddress.ip_address("fe80::1%eth0"), allowed) is not None
    assert address_refusal(ipaddress.ip_address("fe80::1"), allowed) is None


def test_it_refuses_loopback_outside_a_narrow_allow_list() -> None:
    allowed = (ipaddress.ip_network("127.0.0.1/32"),)
    assert address_refusal(ipaddress.ip_address("127.0.0.1"), allowed) is None
    assert address_refusal(ipaddress.ip_address("127.0.0.2"), allowed) is not None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("[fe80::1%25eth0]", "fe80::1%eth0"),
        ("10.1", "10.0.0.1"),
        ("1.2.3", "1.2.0.3"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0x7F.1", "127.0.0.1"),
    ],
)
def test_it_parses_ip_literals(host: str, expected: str) -> None:
    assert parse_ip_literal(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize(
    "host", ["example.com", "agent.example.org", "localhost", "1.2.3.4.5", "08.0.0.1", "[nope]", ""]
)
def test_it_treats_host_names_as_not_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST.",
        "db.localhost",
        "printer.local",
        "metadata.google.internal",
        "nas.home.arpa",
        "router.lan",
        "wiki.corp",
        "portal.intranet",
        "hidden.onion",
        "eepsite.i2p",
        "intranet",
        "a..b",
        "exa%20mple.com",
        "foo.1234",
        "1.2.3.4.5",
        "",
    ],
)
def test_it_refuses_local_single_label_and_malformed_names(host: str) -> None:
    assert host_refusal(host) is not None


@pytest.mark.parametrize(
    "host", ["example.com", "agents.example.org.", "xn--mnchen-3ya.de", "a-b.io"]
)
def test_it_allows_public_looking_names(host: str) -> None:
    assert host_refusal(host) is None


def test_it_allows_localhost_only_when_loopback_is_exempt() -> None:
    assert host_refusal("localhost") is not None
    assert host_refusal("localhost", LOOPBACK) is None
    assert host_refusal("localhost", (ipaddress.ip_network("127.0.0.0/8"),)) is None
    assert host_refusal("localhost", (ipaddress.ip_network("10.0.0.0/8"),)) is not None
    # The exemption covers the name itself, not every *.localhost name.
    assert host_refusal("evil.localhost", LOOPBACK) is not None

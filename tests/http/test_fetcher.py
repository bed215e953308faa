"""The safe fetcher against real servers on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import gzip
import ipaddress
import json
import pickle
import socket
import time
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from registry.http import FetchError, FetchPolicy, check_url, fetch, parse_retry_after
from registry.http.fetcher import Resolver
from tests.http.conftest import EgressGuard, TestPki, TestServer, respond

CARD = {"name": "Test agent", "url": "https://agent.example/a2a", "version": "1.0"}


def fetch_error(url: str, policy: FetchPolicy, **kwargs: Any) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, policy=policy, **kwargs)
    return caught.value


def fixed_resolver(answers: dict[str, list[str]]) -> tuple[list[tuple[str, int]], Resolver]:
    """A resolver hook answering from a table, and the list of lookups it received."""
    calls: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append((host, port))
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return calls, resolve


# --- The ordinary case ----------------------------------------------------------------------


def test_it_fetches_a_json_document(server: TestServer, policy: FetchPolicy) -> None:
    validators = {"ETag": '"v1"', "Last-Modified": "Mon, 02 Mar 2026 10:00:00 GMT"}
    server.json("/card.json", CARD, headers=validators)

    result = fetch(server.url("/card.json"), policy=policy)

    assert result.status == 200
    assert json.loads(result.body) == CARD
    assert result.url == server.url("/card.json")
    assert result.content_type == "application/json"
    assert result.lenient_content_type is False
    assert result.not_modified is False
    assert result.redirects == []
    assert result.etag == '"v1"'
    assert result.last_modified == "Mon, 02 Mar 2026 10:00:00 GMT"
    assert result.headers["content-type"] == "application/json"
    assert result.elapsed_ms > 0


def test_it_sends_the_fixed_user_agent_and_accept_headers(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.json("/card.json", CARD)

    fetch(server.url("/card.json"), policy=policy, headers={"User-Agent": "fake", "X-Extra": "1"})

    seen = server.seen[-1].headers
    assert seen["user-agent"] == "registry-tests/1.0"
    assert seen["accept"] == "application/json, application/*+json;q=0.9, */*;q=0.1"
    assert seen["accept-encoding"] == "gzip, deflate"
    assert seen["x-extra"] == "1"


def test_it_accepts_vendor_json_media_types(server: TestServer, policy: FetchPolicy) -> None:
    server.raw("/card.json", b"{}", headers={"Content-Type": "Application/A2A+JSON; charset=utf-8"})

    result = fetch(server.url("/card.json"), policy=policy)

    assert result.content_type == "application/a2a+json"
    assert result.lenient_content_type is False


# --- Redirects ------------------------------------------------------------------------------


def test_it_follows_up_to_three_redirects_and_reports_each_hop(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.redirect("/one", "/two", status=301)
    server.redirect("/two", server.url("/three"), status=307)
    server.redirect("/three", "card.json", status=308)
    server.json("/card.json", CARD)

    result = fetch(server.url("/one"), policy=policy)

    assert json.loads(result.body) == CARD
    assert result.url == server.url("/card.json")
    assert result.redirects == [server.url("/two"), server.url("/three"), server.url("/card.json")]


def test_it_refuses_a_fourth_redirect(server: TestServer, policy: FetchPolicy) -> None:
    for hop in range(4):
        server.redirect(f"/r{hop}", f"/r{hop + 1}")
    server.json("/r4", CARD)

    error = fetch_error(server.url("/r0"), policy)

    assert error.code == "too-many-redirects"
    assert error.transient is False
    assert [s.path for s in server.seen] == ["/r0", "/r1", "/r2", "/r3"]


def test_it_refuses_a_redirect_to_a_loopback_address_outside_the_allow_list(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    narrow = replace(policy, allowed_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    server.redirect("/card.json", f"http://127.0.0.2:{server.port}/card.json")

    error = fetch_error(server.url("/card.json"), narrow)

    assert error.code == "address-refused"
    assert "127.0.0.2 is a loopback address" in error.reason
    assert error.url == f"http://127.0.0.2:{server.port}/card.json"
    assert len(egress_guard.connects) == 1  # only the first hop was dialled


def test_it_refuses_a_redirect_to_the_metadata_service(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    server.redirect("/card.json", "http://169.254.169.254/latest/meta-data/")

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "address-refused"
    assert "169.254.169.254" in error.reason
    assert len(egress_guard.connects) == 1


def test_it_refuses_a_redirect_to_a_name_resolving_to_a_private_address(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    calls, resolver = fixed_resolver({"internal.example": ["10.0.0.1"]})
    guarded = replace(policy, resolver=resolver, allowed_ports=frozenset({443, server.port}))
    server.redirect("/card.json", f"http://internal.example:{server.port}/card.json")

    error = fetch_error(server.url("/card.json"), guarded)

    assert error.code == "address-refused"
    assert error.reason == "internal.example resolves to 10.0.0.1, a private address"
    assert calls == [("internal.example", server.port)]
    assert len(egress_guard.connects) == 1


@pytest.mark.parametrize(
    "location", ["file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://agent.example/card.json"]
)
def test_it_refuses_a_redirect_to_a_non_http_scheme(
    server: TestServer, policy: FetchPolicy, location: str
) -> None:
    server.redirect("/card.json", location)

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "redirect-refused"
    assert error.transient is False


def test_it_drops_caller_headers_when_a_redirect_changes_origin(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.redirect("/old", server.url("/card.json", host="localhost"))
    server.json("/card.json", CARD)

    fetch(server.url("/old"), policy=policy, headers={"If-None-Match": '"v1"'})

    first, second = server.seen
    assert first.headers["if-none-match"] == '"v1"'
    assert "if-none-match" not in second.headers
    assert second.headers["host"] == f"localhost:{server.port}"


# --- Size limits and decoding ---------------------------------------------------------------


def test_it_refuses_a_declared_length_over_the_cap_before_reading(
    server: TestServer, policy: FetchPolicy
) -> None:
    def huge(handler: BaseHTTPRequestHandler) -> None:
        respond(
            handler,
            200,
            b"{",
            {"Content-Type": "application/json", "Content-Length": str(10 * 1024 * 1024)},
        )
        time.sleep(2)  # a client that tried to read the body would hang here

    server.route("/card.json", huge)
    started = time.monotonic()

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "too-large"
    assert error.transient is False
    assert error.reason == "the response is larger than 64 KiB"
    assert time.monotonic() - started < 1.0


def test_it_stops_reading_a_chunked_body_over_the_cap(
    server: TestServer, policy: FetchPolicy
) -> None:
    def endless(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b"x" * 8192
        for _ in range(100):  # 800 KiB, far over the 64 KiB cap
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.write(b"0\r\n\r\n")

    server.route("/card.json", endless)

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "too-large"


def test_it_stops_reading_a_close_delimited_body_over_the_cap(
    server: TestServer, policy: FetchPolicy
) -> None:
    def unbounded(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        handler.wfile.write(b" " * (200 * 1024))

    server.route("/card.json", unbounded)

    assert fetch_error(server.url("/card.json"), policy).code == "too-large"


def test_it_accepts_a_body_exactly_at_the_cap(server: TestServer, policy: FetchPolicy) -> None:
    body = b'"' + b"a" * (policy.max_bytes - 2) + b'"'
    server.raw("/card.json", body, headers={"Content-Type": "application/json"})

    assert fetch(server.url("/card.json"), policy=policy).body == body


def test_it_refuses_a_gzip_bomb_by_its_decoded_size(
    server: TestServer, policy: FetchPolicy
) -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * (1024 * 1024)
    bomb = b"".join(compressor.compress(zeros) for _ in range(16)) + compressor.flush()
    assert len(bomb) < policy.max_bytes  # small on the wire, 16 MiB decoded
    server.raw(
        "/card.json", bomb, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "too-large"
    assert error.reason == "the decoded body is larger than 64 KiB"


def test_it_decodes_gzip_bodies(server: TestServer, policy: FetchPolicy) -> None:
    server.raw(
        "/card.json",
        gzip.compress(json.dumps(CARD).encode()),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )

    assert json.loads(fetch(server.url("/card.json"), policy=policy).body) == CARD


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib", "raw"])
def test_it_decodes_deflate_bodies_with_or_without_the_zlib_wrapper(
    server: TestServer, policy: FetchPolicy, wbits: int
) -> None:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    body = compressor.compress(json.dumps(CARD).encode()) + compressor.flush()
    server.raw(
        "/card.json",
        body,
        headers={"Content-Type": "application/json", "Content-Encoding": "deflate"},
    )

    assert json.loads(fetch(server.url("/card.json"), policy=policy).body) == CARD


def test_it_refuses_a_corrupt_gzip_body(server: TestServer, policy: FetchPolicy) -> None:
    truncated = gzip.compress(json.dumps(CARD).encode() * 50)[:-20]
    server.raw(
        "/card.json",
        truncated,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )

    assert fetch_error(server.url("/card.json"), policy).code == "decompression-failed"


def test_it_refuses_encodings_it_cannot_decode_with_a_cap(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.raw(
        "/card.json",
        b"\x1b\x00",
        headers={"Content-Type": "application/json", "Content-Encoding": "br"},
    )

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "decompression-failed"
    assert "br" in error.reason


# --- Time limits ----------------------------------------------------------------------------


def test_it_gives_up_on_a_server_that_drips_bytes_past_the_total_deadline(
    server: TestServer, policy: FetchPolicy
) -> None:
    def drip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(1000):  # one byte per 50 ms: far under the 2 s read timeout
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.05)

    server.route("/card.json", drip)
    quick = replace(policy, total_timeout=0.6)
    started = time.monotonic()

    error = fetch_error(server.url("/card.json"), quick)

    elapsed = time.monotonic() - started
    assert error.code == "timeout"
    assert error.transient is True
    assert 0.5 < elapsed < 1.5


def test_it_holds_the_deadline_while_a_read_is_waiting(
    server: TestServer, policy: FetchPolicy
) -> None:
    def stall(handler: BaseHTTPRequestHandler) -> None:
        respond(handler, 200, b"{", {"Content-Type": "application/json", "Content-Length": "2"})
        time.sleep(2)  # the read timeout is 2 s; the total deadline must end the read first

    server.route("/card.json", stall)
    started = time.monotonic()

    error = fetch_error(server.url("/card.json"), replace(policy, total_timeout=0.4))

    assert error.code == "timeout"
    assert error.reason == "the server did not answer within the total time limit"
    assert time.monotonic() - started < 1.0


def test_it_times_out_a_server_that_never_answers(server: TestServer, policy: FetchPolicy) -> None:
    server.route("/card.json", lambda handler: time.sleep(1.5))
    slow = replace(policy, read_timeout=0.3)

    error = fetch_error(server.url("/card.json"), slow)

    assert error.code == "timeout"
    assert error.transient is True


# --- Content type ---------------------------------------------------------------------------


def test_it_refuses_an_html_page(server: TestServer, policy: FetchPolicy) -> None:
    server.raw("/card.json", b"<html></html>", headers={"Content-Type": "text/html; charset=utf-8"})

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "content-type"
    assert error.transient is False
    assert "text/html" in error.reason


def test_it_accepts_any_type_when_json_is_not_expected(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.raw("/logo", b"<svg/>", headers={"Content-Type": "image/svg+xml"})

    result = fetch(server.url("/logo"), policy=policy, expect_json=False)

    assert result.body == b"<svg/>"
    assert result.content_type == "image/svg+xml"


@pytest.mark.parametrize("content_type", ["text/plain; charset=utf-8", None])
def test_it_accepts_text_plain_or_no_type_leniently(
    server: TestServer, policy: FetchPolicy, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    server.raw("/card.json", json.dumps(CARD).encode(), headers=headers)

    result = fetch(server.url("/card.json"), policy=policy)

    assert result.lenient_content_type is True
    assert json.loads(result.body) == CARD


# --- Status codes ---------------------------------------------------------------------------


def test_it_reports_404_as_a_permanent_failure(server: TestServer, policy: FetchPolicy) -> None:
    error = fetch_error(server.url("/missing.json"), policy)

    assert error.code == "http-status"
    assert error.status == 404
    assert error.transient is False
    assert error.reason == "the server answered 404 Not Found"


def test_it_reports_503_as_transient_with_retry_after(
    server: TestServer, policy: FetchPolicy
) -> None:
    server.raw("/card.json", b"", status=503, headers={"Retry-After": "120"})

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code == "http-status"
    assert error.status == 503
    assert error.transient is True
    assert error.retry_after == 120.0


def test_it_reports_429_as_transient_and_reads_an_http_date_retry_after(
    server: TestServer, policy: FetchPolicy
) -> None:
    later = datetime.now(UTC) + timedelta(minutes=10)
    server.raw(
        "/card.json", b"", status=429, headers={"Retry-After": format_datetime(later, usegmt=True)}
    )

    error = fetch_error(server.url("/card.json"), policy)

    assert error.status == 429
    assert error.transient is True
    assert error.retry_after is not None and 590 <= error.retry_after <= 600


def test_it_returns_not_modified_for_a_matching_etag(
    server: TestServer, policy: FetchPolicy
) -> None:
    def conditional(handler: BaseHTTPRequestHandler) -> None:
        if handler.headers.get("If-None-Match") == '"v7"':
            respond(handler, 304, b"", {"ETag": '"v7"'})
        else:
            respond(
                handler,
                200,
                json.dumps(CARD).encode(),
                {"Content-Type": "application/json", "ETag": '"v7"'},
            )

    server.route("/card.json", conditional)

    result = fetch(server.url("/card.json"), policy=policy, headers={"If-None-Match": '"v7"'})

    assert result.not_modified is True
    assert result.status == 304
    assert result.body == b""
    assert result.etag == '"v7"'


# --- DNS and the connect-time check ---------------------------------------------------------


@pytest.mark.parametrize(
    ("answers", "refused"),
    [(["10.0.0.1"], "10.0.0.1"), (["127.0.0.1", "93.184.216.34"], "127.0.0.1")],
)
def test_it_refuses_a_name_resolving_to_a_refused_address_without_connecting(
    policy: FetchPolicy, egress_guard: EgressGuard, answers: list[str], refused: str
) -> None:
    calls, resolver = fixed_resolver({"agent.example": answers})
    strict = replace(policy, allowed_networks=(), resolver=resolver)

    error = fetch_error("https://agent.example/.well-known/agent-card.json", strict)

    assert error.code == "address-refused"
    assert error.reason.startswith(f"agent.example resolves to {refused}, ")
    assert error.transient is False
    assert error.url == "https://agent.example/.well-known/agent-card.json"
    assert calls == [("agent.example", 443)]
    assert egress_guard.connects == []


def test_it_refuses_the_whole_lookup_when_one_answer_is_refused(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    # The first answer is an allowed loopback address; the second poisons the lookup.
    _, resolver = fixed_resolver({"agent.example": ["127.0.0.1", "10.0.0.1"]})
    mixed = replace(policy, resolver=resolver, allowed_ports=frozenset({server.port}))
    server.json("/card.json", CARD)

    error = fetch_error(server.url("/card.json", host="agent.example"), mixed)

    assert error.code == "address-refused"
    assert "10.0.0.1" in error.reason
    assert egress_guard.connects == []
    assert server.seen == []


def test_it_connects_to_the_checked_address_and_keeps_the_host_name(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    calls, resolver = fixed_resolver({"agent.example": ["127.0.0.1"]})
    pinned = replace(policy, resolver=resolver, allowed_ports=frozenset({server.port}))
    server.json("/card.json", CARD)

    result = fetch(server.url("/card.json", host="agent.example"), policy=pinned)

    assert json.loads(result.body) == CARD
    assert server.seen[-1].headers["host"] == f"agent.example:{server.port}"
    assert calls == [("agent.example", server.port)]
    assert egress_guard.connects == [("127.0.0.1", server.port)]


def test_it_dials_the_ipv4_form_of_a_mapped_answer(
    server: TestServer, policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    _, resolver = fixed_resolver({"agent.example": ["::ffff:127.0.0.1"]})
    mapped = replace(policy, resolver=resolver, allowed_ports=frozenset({server.port}))
    server.json("/card.json", CARD)

    fetch(server.url("/card.json", host="agent.example"), policy=mapped)

    assert egress_guard.connects == [("127.0.0.1", server.port)]


def test_it_dials_ipv6_literals_as_given(
    policy: FetchPolicy, egress_guard: EgressGuard, closed_port: int
) -> None:
    error = fetch_error(f"http://[::1]:{closed_port}/card.json", policy)

    assert error.code == "connect-failed"
    assert egress_guard.connects == [("::1", closed_port)]


def test_it_refuses_a_public_name_on_an_unlisted_port_before_dns(
    policy: FetchPolicy, egress_guard: EgressGuard
) -> None:
    calls, resolver = fixed_resolver({"agent.example": ["127.0.0.1"]})

    guarded = replace(policy, resolver=resolver)

    error = fetch_error("http://agent.example:6379/", guarded)

    assert error.code == "port-refused"
    assert calls == []
    assert egress_guard.connects == []


def test_it_reports_a_failed_lookup_as_a_transient_dns_failure(policy: FetchPolicy) -> None:
    _, resolver = fixed_resolver({})

    guarded = replace(policy, resolver=resolver)

    error = fetch_error("https://nowhere.example/card.json", guarded)

    assert error.code == "dns-failure"
    assert error.transient is True
    assert "nowhere.example" in error.reason


def test_it_reports_a_refused_connection_as_transient(
    policy: FetchPolicy, closed_port: int
) -> None:
    error = fetch_error(f"http://127.0.0.1:{closed_port}/card.json", policy)

    assert error.code == "connect-failed"
    assert error.transient is True
    assert "refused" in error.reason


def test_it_reports_a_server_speaking_nonsense_as_a_protocol_error(
    server: TestServer, policy: FetchPolicy
) -> None:
    def nonsense(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        handler.wfile.flush()
        handler.close_connection = True

    server.route("/card.json", nonsense)

    assert fetch_error(server.url("/card.json"), policy).code == "protocol-error"


def test_it_reports_a_body_cut_short_as_transient(server: TestServer, policy: FetchPolicy) -> None:
    def cut(handler: BaseHTTPRequestHandler) -> None:
        respond(
            handler,
            200,
            b'{"name": ',
            {"Content-Type": "application/json", "Content-Length": "100"},
        )
        handler.close_connection = True

    server.route("/card.json", cut)

    error = fetch_error(server.url("/card.json"), policy)

    assert error.code in ("protocol-error", "connect-failed")
    assert error.transient is True


# --- TLS ------------------------------------------------------------------------------------


def tls_policy(policy: FetchPolicy, pki: TestPki, port: int, resolver: Resolver) -> FetchPolicy:
    return replace(
        policy,
        resolver=resolver,
        allowed_ports=frozenset({port}),
        ssl_context=pki.client_context(),
    )


def test_it_verifies_tls_against_the_host_name_while_connecting_to_the_pinned_address(
    tls_server: TestServer, policy: FetchPolicy, pki: TestPki, egress_guard: EgressGuard
) -> None:
    _, resolver = fixed_resolver({"agent.test": ["127.0.0.1"]})
    tls_server.json("/card.json", CARD)

    result = fetch(
        tls_server.url("/card.json", host="agent.test"),
        policy=tls_policy(policy, pki, tls_server.port, resolver),
    )

    assert json.loads(result.body) == CARD
    assert tls_server.seen[-1].sni == "agent.test"
    assert tls_server.seen[-1].headers["host"] == f"agent.test:{tls_server.port}"
    assert egress_guard.connects == [("127.0.0.1", tls_server.port)]


def test_it_refuses_a_certificate_for_another_name_on_the_same_address(
    tls_server: TestServer, policy: FetchPolicy, pki: TestPki
) -> None:
    _, resolver = fixed_resolver({"other.test": ["127.0.0.1"]})
    tls_server.json("/card.json", CARD)

    error = fetch_error(
        tls_server.url("/card.json", host="other.test"),
        tls_policy(policy, pki, tls_server.port, resolver),
    )

    assert error.code == "tls-error"
    assert "certificate" in error.reason


def test_it_refuses_a_certificate_from_an_untrusted_authority(
    tls_server: TestServer, policy: FetchPolicy, pki: TestPki
) -> None:
    _, resolver = fixed_resolver({"agent.test": ["127.0.0.1"]})
    default_trust = replace(tls_policy(policy, pki, tls_server.port, resolver), ssl_context=None)

    error = fetch_error(tls_server.url("/card.json", host="agent.test"), default_trust)

    assert error.code == "tls-error"
    assert error.transient is False


def test_it_refuses_a_redirect_from_https_to_http(
    tls_server: TestServer, server: TestServer, policy: FetchPolicy, pki: TestPki
) -> None:
    _, resolver = fixed_resolver({"agent.test": ["127.0.0.1"]})
    tls_server.redirect("/card.json", server.url("/card.json"))
    server.json("/card.json", CARD)

    error = fetch_error(
        tls_server.url("/card.json", host="agent.test"),
        tls_policy(policy, pki, tls_server.port, resolver),
    )

    assert error.code == "redirect-refused"
    assert "https to plain http" in error.reason
    assert server.seen == []


# --- check_url (no DNS, no traffic) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://agent.example/card.json", "scheme-refused"),
        ("file:///etc/passwd", "scheme-refused"),
        ("https://user:secret@agent.example/card.json", "bad-url"),
        ("https://agent.example:8443/card.json", "port-refused"),
        ("https://localhost/card.json", "address-refused"),
        ("https://127.0.0.1/card.json", "address-refused"),
        ("https://2130706433/card.json", "address-refused"),
        ("https://[::ffff:169.254.169.254]/", "address-refused"),
        ("https://metadata.google.internal/", "address-refused"),
        ("https://intranet/card.json", "address-refused"),
        ("/relative/card.json", "bad-url"),
        ("https://agent.example/" + "a" * 2048, "bad-url"),
        ("https://agent .example/", "bad-url"),
        ("not a url", "bad-url"),
        ("https://agent.example:99999/", "bad-url"),
        ("https:///card.json", "bad-url"),
        ("https://agent.example@169.254.169.254/", "bad-url"),
    ],
)
def test_it_refuses_unfetchable_urls_before_any_lookup(
    url: str, code: str, egress_guard: EgressGuard
) -> None:
    production = FetchPolicy()

    with pytest.raises(FetchError) as caught:
        check_url(url, production)

    assert caught.value.code == code
    assert caught.value.transient is False
    assert caught.value.url == url
    assert egress_guard.connects == []


def test_it_refuses_plain_http_unless_allowed() -> None:
    with pytest.raises(FetchError) as caught:
        check_url("http://agent.example/card.json", FetchPolicy(allowed_ports=frozenset({80, 443})))
    assert caught.value.code == "scheme-refused"

    check_url(
        "http://agent.example/card.json",
        FetchPolicy(allow_http=True, allowed_ports=frozenset({80, 443})),
    )


def test_it_allows_a_public_https_url_on_port_443() -> None:
    check_url("https://agent.example/.well-known/agent-card.json", FetchPolicy())
    check_url("https://agent.example:443/.well-known/agent-card.json", FetchPolicy())


def test_it_allows_any_port_on_exempt_loopback_hosts(policy: FetchPolicy) -> None:
    check_url("http://localhost:8000/card.json", policy)
    check_url("http://127.0.0.1:65000/card.json", policy)
    check_url("http://[::1]:8080/card.json", policy)
    with pytest.raises(FetchError) as caught:
        check_url("http://agent.example:8000/card.json", policy)
    assert caught.value.code == "port-refused"


# --- Errors as values -----------------------------------------------------------------------


def test_it_shows_the_reason_as_the_error_text_and_survives_pickling() -> None:
    error = FetchError(
        "http-status",
        "the server answered 503",
        url="https://a.example/",
        transient=True,
        status=503,
        retry_after=30.0,
    )

    copy = pickle.loads(pickle.dumps(error))

    assert str(error) == "the server answered 503"
    assert (copy.code, copy.reason, copy.url, copy.transient, copy.status, copy.retry_after) == (
        "http-status",
        "the server answered 503",
        "https://a.example/",
        True,
        503,
        30.0,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_it_parses_retry_after_values(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_it_builds_the_policy_from_settings(settings: Any) -> None:
    settings.REGISTRY_FETCH_ALLOWED_PORTS = frozenset({443, 8443})
    settings.REGISTRY_FETCH_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.0/8")]
    settings.REGISTRY_FETCH_MAX_BYTES = 4096

    policy = FetchPolicy.from_settings()

    assert policy.allowed_ports == frozenset({443, 8443})
    assert policy.allowed_networks == (ipaddress.ip_network("127.0.0.0/8"),)
    assert policy.max_bytes == 4096
    assert policy.max_redirects == 3

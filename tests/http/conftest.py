"""Real HTTP(S) servers on 127.0.0.1 for the fetcher tests, and a loopback-only egress guard.

The guard is a ``sys.audit`` hook: every ``socket.connect`` and ``getaddrinfo`` in the process
is seen, so a test bug can never dial out or query DNS, and tests can assert that a refused
fetch opened no connection at all.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import socketserver
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from registry.http import FetchPolicy

LOOPBACK_NETWORKS = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


# --- Egress guard ---------------------------------------------------------------------------


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@dataclass
class EgressGuard:
    active: bool = False
    connects: list[tuple[str, int]] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple) and len(address) >= 2:
                if not _is_loopback(address[0]):
                    self.blocked.append(f"connect {address!r}")
                    raise RuntimeError(f"test egress guard: connect to {address!r} refused")
                self.connects.append((str(address[0]), int(address[1])))
        elif event == "socket.getaddrinfo":
            host = args[0]
            # Literal loopback addresses need no DNS; any real lookup would leave the machine.
            if not _is_loopback(host):
                self.blocked.append(f"getaddrinfo {host!r}")
                raise RuntimeError(f"test egress guard: DNS lookup of {host!r} refused")
        elif event in ("socket.gethostbyname", "socket.gethostbyaddr"):
            self.blocked.append(f"{event} {args!r}")
            raise RuntimeError(f"test egress guard: {event} refused")


_GUARD = EgressGuard()
_hook_lock = threading.Lock()
_hook_installed = False


def _install_hook() -> None:
    # Audit hooks cannot be removed, so one is installed per process and switched on and off.
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_GUARD.audit)
            _hook_installed = True


@pytest.fixture(autouse=True)
def egress_guard() -> Iterator[EgressGuard]:
    _install_hook()
    _GUARD.connects.clear()
    _GUARD.blocked.clear()
    _GUARD.active = True
    try:
        yield _GUARD
    finally:
        _GUARD.active = False
    assert not _GUARD.blocked, f"a test tried to leave loopback: {_GUARD.blocked}"


# --- Test servers ---------------------------------------------------------------------------

RouteHandler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]
    sni: str | None


def respond(
    handler: BaseHTTPRequestHandler,
    status: int = 200,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> None:
    """Write a complete response; Content-Length is added unless the headers set it."""
    handler.send_response(status)
    given = {k.lower() for k in (headers or {})}
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if "content-length" not in given and "transfer-encoding" not in given:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if body:
        handler.wfile.write(body)
    handler.wfile.flush()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?", 1)[0]
        sni = getattr(self.connection, "sni_seen", None)
        self.server.owner.seen.append(
            SeenRequest(
                path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, sni=sni
            )
        )
        route = self.server.owner.routes.get(path)
        if route is None:
            respond(self, 404, b'{"error": "no such route"}', {"Content-Type": "application/json"})
            return
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True  # the client gave up first, as several tests intend

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet


class _Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: TestServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls getfqdn (a reverse lookup); the guard forbids that.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # TLS is wrapped here, in the per-connection thread, so a failed handshake (which
        # several tests provoke) never blocks the accept loop.
        context = self.owner.tls_context
        if context is not None:
            try:
                request = context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            request.sni_seen = self.owner.last_sni
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up early (the fetcher aborting a body) are expected, not failures.
        if not isinstance(sys.exc_info()[1], ConnectionError | ssl.SSLError | TimeoutError):
            super().handle_error(request, client_address)


class TestServer:
    """A threaded HTTP(S) server on 127.0.0.1 whose responses are set per path."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, tls_context: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, RouteHandler] = {}
        self.seen: list[SeenRequest] = []
        self.tls_context = tls_context
        self.last_sni: str | None = None
        if tls_context is not None:
            tls_context.sni_callback = self._remember_sni
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port: int = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def _remember_sni(self, sock: ssl.SSLObject, name: str | None, context: Any) -> None:
        self.last_sni = name

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.tls_context is not None else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def route(self, path: str, handler: RouteHandler) -> None:
        self.routes[path] = handler

    def json(
        self, path: str, document: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        body = json.dumps(document).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        self.route(path, lambda h: respond(h, status, body, all_headers))

    def raw(
        self, path: str, body: bytes, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.route(path, lambda h: respond(h, status, body, headers or {}))

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.route(path, lambda h: respond(h, status, b"", {"Location": location}))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def server() -> Iterator[TestServer]:
    instance = TestServer()
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def policy() -> FetchPolicy:
    """Loopback exempt, plain http allowed, small limits so failures show up fast."""
    return FetchPolicy(
        allow_http=True,
        allowed_networks=LOOPBACK_NETWORKS,
        allowed_ports=frozenset({443}),
        max_bytes=64 * 1024,
        connect_timeout=1.0,
        read_timeout=2.0,
        total_timeout=3.0,
        user_agent="registry-tests/1.0",
    )


@pytest.fixture
def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- TLS: a throwaway CA and a certificate for agent.test -----------------------------------


@dataclass
class TestPki:
    __test__ = False
    ca_pem: bytes
    cert_file: Path
    key_file: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "registry test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent.test")]))
        .issuer_name(ca_name)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("agent.test")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    directory = tmp_path_factory.mktemp("pki")
    cert_file = directory / "agent.test.pem"
    key_file = directory / "agent.test.key"
    cert_file.write_bytes(leaf_cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return TestPki(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_file=cert_file,
        key_file=key_file,
    )


@pytest.fixture
def tls_server(pki: TestPki) -> Iterator[TestServer]:
    instance = TestServer(tls_context=pki.server_context())
    try:
        yield instance
    finally:
        instance.close()

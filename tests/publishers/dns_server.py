"""A real DNS server on 127.0.0.1 for the DNS proofs: dnslib, UDP, a random port.

``records`` maps a name (no trailing dot, lower case) to its TXT values; a name not in it is
NXDOMAIN. ``failing = True`` answers SERVFAIL to everything (a broken zone: transient).
``queries`` lists the names asked, so a test can see the registry did ask.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dnslib import QTYPE, RCODE, RR, TXT
from dnslib.server import BaseResolver, DNSLogger, DNSServer


class TxtZone(BaseResolver):
    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.failing = False
        self.queries: list[str] = []

    def resolve(self, request: Any, handler: Any) -> Any:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        self.queries.append(name)
        if self.failing:
            reply.header.rcode = RCODE.SERVFAIL
            return reply
        if name not in self.records:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        if request.q.qtype == QTYPE.TXT:
            for value in self.records[name]:
                # Long values are split into 255-byte strings, as zone files do.
                data = value.encode("utf-8")
                chunks = [data[i : i + 255] for i in range(0, len(data), 255)] or [b""]
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(chunks), ttl=60))
        return reply


class LocalDns:
    def __init__(self, zone: TxtZone, server: DNSServer) -> None:
        self.zone = zone
        self.server = server
        self.port: int = server.server.server_address[1]

    @property
    def nameservers(self) -> list[tuple[str, int]]:
        """The value of ``settings.REGISTRY_DNS_NAMESERVERS`` that points at this server."""
        return [("127.0.0.1", self.port)]


@contextmanager
def running_dns() -> Iterator[LocalDns]:
    zone = TxtZone()
    server = DNSServer(zone, address="127.0.0.1", port=0, logger=DNSLogger(logf=lambda _: None))
    server.start_thread()
    try:
        yield LocalDns(zone, server)
    finally:
        server.stop()
        server.server.server_close()

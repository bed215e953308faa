"""Random agent cards for comparing our a2a-sdk canonical form with the SDK's, seeded.

The fields come from a2a-sdk's own message descriptors, walked here independently of
``cards.signatures.sdkform``, so a field the builder forgot would show up as a difference.
Every message gets unknown members, nulls, empty values and now and then a value of the
wrong type; a third of the cards are written in the v0.3 shape that ``parse_agent_card``
maps; ``params`` holds numbers of every kind, text of every kind and nesting.
"""

from __future__ import annotations

import random
from typing import Any

from a2a.types import a2a_pb2

TEXT = (
    "",
    "a",
    "é",
    "😀",
    "\u2028",
    'tab\tquote"back\\slash\x01',
    "\x00",
    "\uffff",
    "日本語",
    "https://agent.example/a2a",
    "JSONRPC",
    "HTTP+JSON",
    "0.3.0",
    " ",
)
KEYS = ("a", "b", "é", "😀", "\uffff", "\ue000", "A", "", "€", "𝄞x", "streaming", "url", "\udc00")
NUMBERS = (0, 1, -1, 7, 2**31, 2**53 - 1, -(2**53) + 1, 0.0, -0.0, 1.0, 0.1, -2.5, 1e-7, 1e-6)
MORE_NUMBERS = (1e21, 1e20, 5e-324, 2.0**60, 123456789.125, 1.7976931348623157e308, 2**53, 10**20)
UNKNOWN = ("x-vendor", "schemas", "extra", "😀", "Name", "type", "in", "[ext.field]", "")
SCHEME_TYPES = ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS", "other", None, 3)


def text(rng: random.Random) -> str:
    if rng.random() < 0.003:
        return rng.choice(("\ud800", "a\udfff", "\ud83d\ude00"))  # surrogates: as json.loads
    if rng.random() < 0.7:
        return rng.choice(TEXT)
    return "".join(rng.choice(TEXT) for _ in range(rng.randrange(1, 4)))


def number(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice(MORE_NUMBERS)
    if rng.random() < 0.3:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 25)
    return rng.choice(NUMBERS)


def junk(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value, nested up to a few levels."""
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice((None, True, False))
    if kind in (1, 2):
        return number(rng)
    if kind in (3, 4):
        return text(rng)
    if kind in (5, 6):
        return {rng.choice(KEYS): junk(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [junk(rng, depth + 1) for _ in range(rng.randrange(5))]


def deep(rng: random.Random, levels: int) -> Any:
    value: Any = number(rng)
    for _ in range(levels):
        value = {"k": value} if rng.random() < 0.5 else [value, None, ""]
    return value


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def card(self) -> dict[str, Any]:
        data = self.message(a2a_pb2.AgentCard.DESCRIPTOR, 0)
        if self.rng.random() < 0.35:
            self.legacy(data)
        return data

    # --- v1.0 messages from the descriptors -------------------------------------------------

    def message(self, descriptor: Any, depth: int) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        fields = list(descriptor.fields)
        rng.shuffle(fields)
        oneof_taken: set[str] = set()
        for fd in fields:
            oneof = fd.containing_oneof
            real_oneof = oneof is not None and len(oneof.fields) > 1
            if real_oneof and oneof.name in oneof_taken and rng.random() < 0.99:
                continue
            if rng.random() < (0.1 if real_oneof else 0.35):
                continue
            if real_oneof:
                oneof_taken.add(oneof.name)
            name = fd.json_name
            if fd.name != fd.json_name and rng.random() < 0.15:
                name = fd.name
            roll = rng.random()
            if roll < 0.05:
                out[name] = None
            elif roll < 0.06:
                out[name] = junk(rng, 2)
            else:
                out[name] = self.value(fd, depth)
            if fd.name != fd.json_name and rng.random() < 0.03:
                other = fd.name if name == fd.json_name else fd.json_name
                out[other] = None if rng.random() < 0.3 else self.value(fd, depth)
        while rng.random() < 0.3:
            key = rng.choice(UNKNOWN)
            if key.startswith("[") and rng.random() < 0.9:
                continue
            out[key] = junk(rng, 1)
        return out

    def value(self, fd: Any, depth: int) -> Any:
        rng = self.rng
        message = fd.message_type
        if message is not None and message.GetOptions().map_entry:
            value_fd = message.fields_by_name["value"]
            return {text(rng): self.value(value_fd, depth) for _ in range(rng.randrange(4))}
        if fd.is_repeated:
            items = [self.single(fd, depth) for _ in range(rng.randrange(4))]
            if items and rng.random() < 0.01:
                items.append(rng.choice((None, 1, "", {})))
            return items
        return self.single(fd, depth)

    def single(self, fd: Any, depth: int) -> Any:
        rng = self.rng
        message = fd.message_type
        if message is None:
            if fd.type == fd.TYPE_BOOL:
                return rng.random() < 0.5
            return text(rng)
        if message.full_name == "google.protobuf.Struct":
            params = {rng.choice(KEYS): junk(rng) for _ in range(rng.randrange(6))}
            if rng.random() < 0.05:
                params["deep"] = deep(rng, rng.randrange(20, 60))
            return params
        if depth > 6:
            return {}
        roll = rng.random()
        if roll < 0.01:
            return rng.choice(("text", ["generate", "analyze"], ["streaming"], 5))
        return self.message(message, depth + 1)

    # --- the v0.3 shape --------------------------------------------------------------------

    def legacy(self, data: dict[str, Any]) -> None:
        rng = self.rng
        if rng.random() < 0.6:
            data.pop("supportedInterfaces", None)
            data.pop("supported_interfaces", None)
        data["url"] = rng.choice(("https://a.example/rpc", "", None, "https://b.example/x"))
        for name, values in (
            ("preferredTransport", ("GRPC", "HTTP+JSON", None, "")),
            ("protocolVersion", ("0.3.0", "0.2.5", None)),
        ):
            if rng.random() < 0.6:
                data[name] = rng.choice(values)
        if rng.random() < 0.5:
            data["additionalInterfaces"] = [
                {"url": text(rng), "transport": rng.choice(("GRPC", None, "X")), "x": 1}
                for _ in range(rng.randrange(3))
            ]
        if rng.random() < 0.5:
            data["security"] = self.legacy_security()
        if rng.random() < 0.4:
            data["supportsAuthenticatedExtendedCard"] = rng.choice((True, False, None, 1, ""))
        skills = data.get("skills")
        if isinstance(skills, list):
            for skill in skills:
                if isinstance(skill, dict) and rng.random() < 0.4:
                    skill["security"] = self.legacy_security()
        if rng.random() < 0.6:
            data["securitySchemes"] = {
                text(rng): self.legacy_scheme() for _ in range(rng.randrange(1, 4))
            }

    def legacy_security(self) -> Any:
        rng = self.rng
        if rng.random() < 0.05:
            return rng.choice((None, {"a": []}, "x"))
        return [
            {
                rng.choice(("oauth", "key", "é")): rng.choice((["read", "write"], [], None, [""]))
                for _ in range(rng.randrange(3))
            }
            for _ in range(rng.randrange(3))
        ]

    def legacy_scheme(self) -> dict[str, Any]:
        rng = self.rng
        scheme: dict[str, Any] = {"type": rng.choice(SCHEME_TYPES)}
        for name, value in (
            ("description", text(rng)),
            ("in", rng.choice(("header", "query", ""))),
            ("name", "X-Key"),
            ("location", "cookie"),
            ("scheme", "bearer"),
            ("bearerFormat", "JWT"),
            ("openIdConnectUrl", "https://id.example/.well-known/openid-configuration"),
            ("flows", {"clientCredentials": {"tokenUrl": "https://t.example", "scopes": {}}}),
            ("oauth2MetadataUrl", text(rng)),
        ):
            if rng.random() < 0.4:
                scheme[name] = value
        return scheme

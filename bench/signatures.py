"""Card signature verification per algorithm: the old and new canonical form and the bare verify.

    .venv/bin/python bench/signatures.py --cards 300 --rounds 5

For each algorithm, N distinct synthetic cards (bench/synth.py, ~2 KB each) are signed with
a2a-sdk's ``create_agent_card_signer``. ``verify_document`` then checks them one after another
in this one process, with the JWKS already in the cache (it is served once by a loopback
server on 127.0.0.1 and fetched once before the clock starts), in three ways:

* old: the a2a-sdk form built by the SDK's protobuf round trip (``sdk_form_reference``), no
  memo: what every verification cost before the plain-Python form;
* new, first sight: the plain-Python form with its memo emptied before each card (a card
  seen for the first time, as on a first crawl);
* new, seen before: the memo holds the card (a re-crawl of an unchanged signed card).

The baseline is ``public_key.verify`` from ``cryptography`` over the very same signing input
and signature bytes (DER already prepared for ECDSA), so each ratio is what parsing,
canonicalisation, key lookup and reporting add. Reports the median of the rounds.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-not-for-production")

import django  # noqa: E402

django.setup()

from a2a.client.card_resolver import parse_agent_card  # noqa: E402
from a2a.utils.signing import create_agent_card_signer  # noqa: E402
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm  # noqa: E402

from bench import synth  # noqa: E402
from cards.signatures import JwksSource, canonical, payloads, verify_document  # noqa: E402
from cards.signatures.canonical import sdk_form_fast, sdk_form_reference  # noqa: E402
from cards.signatures.jose import b64url_decode  # noqa: E402
from registry.http import FetchPolicy  # noqa: E402

ALGORITHMS = ("EdDSA", "ES256", "ES384", "ES512", "RS256", "PS256")
_HASH: dict[str, hashes.HashAlgorithm] = {
    "256": hashes.SHA256(),
    "384": hashes.SHA384(),
    "512": hashes.SHA512(),
}


def _key(alg: str) -> Any:
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    if alg.startswith("ES"):
        return ec.generate_private_key(
            {"ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}[alg]
        )
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public_jwk(key: Any, kid: str) -> dict[str, Any]:
    public = key.public_key()
    if isinstance(public, ed25519.Ed25519PublicKey):
        jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    return {**{k: v for k, v in jwk.items() if k in ("kty", "crv", "x", "y", "n", "e")}, "kid": kid}


def _bare(alg: str, key: Any) -> Callable[[bytes, bytes], None]:
    public = key.public_key()
    if alg == "EdDSA":
        return lambda sig, data: public.verify(sig, data)
    digest = _HASH[alg[2:]]
    if alg.startswith("ES"):
        return lambda sig, data: public.verify(sig, data, ec.ECDSA(digest))
    if alg.startswith("RS"):
        return lambda sig, data: public.verify(sig, data, padding.PKCS1v15(), digest)
    pss = padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
    return lambda sig, data: public.verify(sig, data, pss, digest)


def _der(alg: str, raw: bytes) -> bytes:
    if not alg.startswith("ES"):
        return raw
    half = len(raw) // 2
    return encode_dss_signature(
        int.from_bytes(raw[:half], "big"), int.from_bytes(raw[half:], "big")
    )


def _serve(body: bytes) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/jwk-set+json")
            self.send_header("Cache-Control", "max-age=3600")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _signed_cards(alg: str, key: Any, origin: str, count: int) -> list[dict[str, Any]]:
    signer = create_agent_card_signer(key, {"alg": alg, "kid": alg, "typ": "JOSE"})  # type: ignore[typeddict-item]
    cards = []
    for index in range(count):
        data = synth.make_card(7, index)
        signature = MessageToDict(signer(parse_agent_card(json.loads(json.dumps(data)))))
        data["signatures"] = signature["signatures"]
        cards.append(json.loads(json.dumps(data)))  # as a crawler would hold it after parsing
    return cards


def _rate(run: Callable[[], object], count: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return count / statistics.median(times)


@contextmanager
def _old_canonical_form() -> Iterator[None]:
    """verify_document with the SDK's protobuf round trip and no memo (the code before)."""
    saved = payloads._BUILDERS
    payloads._BUILDERS = (
        ("a2a-sdk", lambda data, digest: sdk_form_reference(data)),
        ("raw", lambda data, digest: canonical._raw_form(data)),
    )
    try:
        yield
    finally:
        payloads._BUILDERS = saved


def _measure(
    alg: str, cards: list[dict[str, Any]], key: Any, card_url: str, source: JwksSource, rounds: int
) -> dict[str, float]:
    warm = verify_document(data=cards[0], card_url=card_url, jwks_source=source)
    assert warm.status == "verified", warm.as_dict()
    fetches = source.fetches

    def verify(data: dict[str, Any]) -> None:
        report = verify_document(data=data, card_url=card_url, jwks_source=source)
        if report.status != "verified":
            raise SystemExit(f"{alg}: not verified: {report.as_dict()}")

    def first_sight() -> None:
        for data in cards:
            canonical.clear_memo()
            verify(data)

    def seen_before() -> None:
        for data in cards:
            verify(data)

    inputs = []
    for data in cards:
        sig = data["signatures"][0]
        signing_input = f"{sig['protected']}.{sdk_form_reference(data).encoded}".encode()
        inputs.append((_der(alg, b64url_decode(sig["signature"]) or b""), signing_input))
    bare_verify = _bare(alg, key)

    def bare() -> None:
        for signature, data in inputs:
            bare_verify(signature, data)

    rates = {"bare": _rate(bare, len(cards), rounds)}
    with _old_canonical_form():
        rates["old"] = _rate(seen_before, len(cards), rounds)
    rates["first"] = _rate(first_sight, len(cards), rounds)
    seen_before()  # fill the memo
    rates["seen"] = _rate(seen_before, len(cards), rounds)
    assert source.fetches == fetches, "the JWKS was fetched again during the run"
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    keys = {alg: _key(alg) for alg in ALGORITHMS}
    jwks = json.dumps({"keys": [_public_jwk(k, alg) for alg, k in keys.items()]}).encode()
    server, origin = _serve(jwks)
    card_url = f"{origin}/.well-known/agent-card.json"
    policy = FetchPolicy(allow_http=True, allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),))
    source = JwksSource(policy)
    rows = []
    try:
        for alg in ALGORITHMS:
            cards = _signed_cards(alg, keys[alg], origin, args.cards)
            rows.append((alg, _measure(alg, cards, keys[alg], card_url, source, args.rounds)))
    finally:
        server.shutdown()
        server.server_close()

    sample = _signed_cards("EdDSA", keys["EdDSA"], origin, args.cards)
    size = statistics.mean(len(json.dumps(c)) for c in sample)
    old_form = _rate(lambda: [sdk_form_reference(c) for c in sample], len(sample), args.rounds)
    new_form = _rate(lambda: [sdk_form_fast(c) for c in sample], len(sample), args.rounds)
    digest = _rate(lambda: [canonical.content_digest(c) for c in sample], len(sample), args.rounds)
    print(
        f"{args.cards} distinct cards per algorithm (~{size:.0f} bytes each), one process, "
        f"JWKS cached; median of {args.rounds} rounds; us per card, and the ratio to the bare "
        "verify"
    )
    header = f"{'alg':<6} {'bare':>7} {'old':>15} {'new, first sight':>17} {'new, seen before':>17}"
    print(header)
    for alg, rates in rows:
        cells = [f"{1e6 / rates['bare']:>5.0f}us"]
        for mode in ("old", "first", "seen"):
            cost = 1e6 / rates[mode]
            cells.append(f"{cost:>8.0f}us {rates['bare'] / rates[mode]:>5.2f}x")
        print(f"{alg:<6} {cells[0]:>7} {cells[1]:>15} {cells[2]:>17} {cells[3]:>17}")
    print(
        f"a2a-sdk form per card: SDK protobuf round trip {1e6 / old_form:.0f} us, plain Python "
        f"(build + RFC 8785) {1e6 / new_form:.0f} us; memo key (orjson + SHA-256) "
        f"{1e6 / digest:.1f} us"
    )


if __name__ == "__main__":
    main()

"""Card signature verification throughput per algorithm, against the bare ``cryptography`` verify.

    .venv/bin/python bench/signatures.py --cards 300 --rounds 5

For each algorithm, N distinct synthetic cards (bench/synth.py, ~1.7 KB each) are signed with
a2a-sdk's ``create_agent_card_signer``. ``verify_document`` then checks them one after another
in this one process, with the JWKS already in the cache (it is served once by a loopback
server on 127.0.0.1 and fetched once before the clock starts). The baseline is
``public_key.verify`` from ``cryptography`` over the very same signing input and signature
bytes (DER already prepared for ECDSA), so the ratio is what parsing, canonicalisation, key
lookup and reporting add. Reports the median of the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
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
from cards.signatures import JwksSource, verify_document  # noqa: E402
from cards.signatures.canonical import sdk_form  # noqa: E402
from cards.signatures.jose import b64url_decode  # noqa: E402
from registry.http import FetchPolicy  # noqa: E402

ALGORITHMS = ("EdDSA", "ES256", "ES384", "ES512", "RS256", "PS256")
_HASH = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


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
    digest = _HASH[alg[2:]]()
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


def _rate(run: Callable[[], None], count: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return count / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    keys = {alg: _key(alg) for alg in ALGORITHMS}
    jwks = json.dumps({"keys": [_public_jwk(k, alg) for alg, k in keys.items()]}).encode()
    server, origin = _serve(jwks)
    card_url = f"{origin}/.well-known/agent-card.json"
    policy = FetchPolicy(allow_http=True, allowed_networks=("127.0.0.0/8",))
    source = JwksSource(policy)
    rows = []
    try:
        for alg in ALGORITHMS:
            cards = _signed_cards(alg, keys[alg], origin, args.cards)
            warm = verify_document(data=cards[0], card_url=card_url, jwks_source=source)
            assert warm.status == "verified", warm.as_dict()
            fetches = source.fetches

            def ours(cards: list[dict[str, Any]] = cards, alg: str = alg) -> None:
                for data in cards:
                    report = verify_document(data=data, card_url=card_url, jwks_source=source)
                    if report.status != "verified":
                        raise SystemExit(f"{alg}: not verified: {report.as_dict()}")

            inputs = []
            for data in cards:
                sig = data["signatures"][0]
                signing_input = f"{sig['protected']}.{sdk_form(data).encoded}".encode()
                inputs.append((_der(alg, b64url_decode(sig["signature"]) or b""), signing_input))
            bare_verify = _bare(alg, keys[alg])

            def bare(inputs: list[tuple[bytes, bytes]] = inputs, check: Any = bare_verify) -> None:
                for signature, data in inputs:
                    check(signature, data)

            ours_rate = _rate(ours, len(cards), args.rounds)
            bare_rate = _rate(bare, len(cards), args.rounds)
            assert source.fetches == fetches, "the JWKS was fetched again during the run"
            rows.append((alg, ours_rate, bare_rate, bare_rate / ours_rate))
    finally:
        server.shutdown()
        server.server_close()

    sample = _signed_cards("EdDSA", keys["EdDSA"], origin, args.cards)
    size = statistics.mean(len(json.dumps(c)) for c in sample)
    canonical_rate = _rate(lambda: [sdk_form(c) for c in sample], len(sample), args.rounds)
    print(
        f"{args.cards} distinct cards per algorithm (~{size:.0f} bytes each), one process, "
        f"JWKS cached; median of {args.rounds} rounds"
    )
    print(f"{'alg':<7} {'verify_document':>16} {'bare verify':>12} {'ratio':>6} {'added':>10}")
    for alg, ours_rate, bare_rate, ratio in rows:
        added = (1 / ours_rate - 1 / bare_rate) * 1e6
        print(
            f"{alg:<7} {ours_rate:>12,.0f}/s {bare_rate:>10,.0f}/s {ratio:>5.2f}x {added:>6.0f} us"
        )
    print(
        f"of the added time, the a2a-sdk canonical form (parse_agent_card + ParseDict + "
        f"MessageToDict + RFC 8785) takes {1e6 / canonical_rate:.0f} us per card"
    )


if __name__ == "__main__":
    main()

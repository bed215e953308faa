"""Proof by a file: the challenge served at a well-known path of the origin.

The registry GETs ``{origin}/.well-known/a2a-registry-challenge/{id}`` (``id``: the origin's
number in the registry, so accounts claiming one origin each have their own file) through its
own fetcher: the fetch policy (https, or http where allowed; no private addresses), the
politeness gate and its timeouts. The body, trimmed of whitespace, must be exactly the
challenge; at most 1 KiB is read. A redirect within the origin is followed; the answer must
come from the origin itself, not from another one it redirects to.
"""

from __future__ import annotations

import dataclasses
import hmac
from typing import Any

from publishers.models import Origin
from publishers.origin_form import try_origin_of_url
from publishers.proofs import Outcome, failed, passed
from registry.http import FetchError, FetchPolicy, fetch

WELL_KNOWN_PREFIX = "/.well-known/a2a-registry-challenge/"
MAX_BYTES = 1024
SHOWN = 64  # characters of a wrong body quoted back


def challenge_url(origin: Origin) -> str:
    return f"{origin.origin}{WELL_KNOWN_PREFIX}{origin.pk}"


def instructions(origin: Origin) -> dict[str, Any]:
    return {
        "url": challenge_url(origin),
        "body": origin.challenge,
        "how": "serve the body as text/plain with status 200 at the url",
    }


def _quoted(text: str) -> str:
    if not text:
        return "an empty body"
    shown = text[:SHOWN] + ("…" if len(text) > SHOWN else "")
    return f"{shown!r}"


def check(origin: Origin, policy: FetchPolicy | None = None) -> Outcome:
    url = challenge_url(origin)
    policy = policy or FetchPolicy.from_settings()
    policy = dataclasses.replace(policy, max_bytes=min(policy.max_bytes, MAX_BYTES))
    try:
        result = fetch(url, policy=policy, headers={"Accept": "text/plain"}, expect_json=False)
    except FetchError as err:
        if err.code == "too-large":
            return failed(f"{url} is longer than {MAX_BYTES} bytes; expected only the challenge")
        return failed(
            f"{url} could not be fetched: {err.reason}; expected a 200 answer whose body is "
            f"{origin.challenge!r}",
            transient=err.transient,
        )
    if try_origin_of_url(result.url) != origin.origin:
        return failed(
            f"{url} redirected to {result.url}, on another origin; the challenge must be "
            f"served by {origin.origin} itself"
        )
    text = result.body.decode("utf-8", "replace").strip()
    if hmac.compare_digest(text.encode("utf-8"), origin.challenge.encode("utf-8")):
        return passed()
    return failed(f"{url} answered {_quoted(text)}; expected exactly {origin.challenge!r}")

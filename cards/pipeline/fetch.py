"""Fetch a card through the safe fetcher, with discovery of an origin's well-known paths."""

from __future__ import annotations

from cards.discovery import candidate_card_urls
from registry.http import FetchError, FetchPolicy, FetchResult, fetch


def fetch_card(
    url: str,
    *,
    discover: bool,
    policy: FetchPolicy | None = None,
    headers: dict[str, str] | None = None,
) -> FetchResult:
    """Fetch the card at ``url``; for an origin, try the well-known paths in order.

    A 404 or 410 on the first well-known path moves on to the next one; any other failure
    is final for this attempt.
    """
    policy = policy or FetchPolicy.from_settings()
    candidates = candidate_card_urls(url) if discover else [url]
    last_error: FetchError | None = None
    for candidate in candidates:
        try:
            return fetch(candidate, policy=policy, headers=headers)
        except FetchError as err:
            last_error = err
            if err.status in (404, 410):
                continue
            raise
    assert last_error is not None
    if len(candidates) > 1:
        last_error.reason = (
            "no agent card at " + " nor ".join(candidates) + f" ({last_error.reason})"
        )
    raise last_error

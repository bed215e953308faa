"""Nothing reaches an endpoint on an unproven word (issue 44 §5).

Opting in to message checks, "Try it"'s Send and an owner's probe each make the registry send
requests to URLs the card names. Each needs the agent's owner to hold a verified proof for the
origin of every URL it reaches: the interfaces' origins, not only the card's. Without one the
answer is a 403 problem saying which origins lack a proof and how to give one. The transport
checks the registry runs on its own schedule start no work at the agent and stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from publishers.models import Origin
from publishers.origin_form import try_origin_of_url
from registry.errors import ProblemError

HOW = (
    'Prove each origin: POST /api/v1/origins {{"origin": "{origin}"}} (or the catalogue\'s '
    "Origins page, /account/origins), publish the challenge at its well-known path, in a DNS "
    "TXT record or sign it with a key of the origin's JWKS, then POST "
    "/api/v1/origins/{{id}}/verify. docs/publishers.md explains each way."
)


def origins_of(urls: Iterable[str]) -> list[str]:
    """The distinct origins of ``urls`` in normal form, in order (URLs without one left out)."""
    seen: dict[str, None] = {}
    for url in urls:
        origin = try_origin_of_url(url)
        if origin is not None:
            seen.setdefault(origin, None)
    return list(seen)


def proven_by(account_id: int | None, origins: Iterable[str]) -> set[str]:
    """Those of ``origins`` the account holds verified."""
    wanted = list(origins)
    if account_id is None or not wanted:
        return set()
    return set(
        Origin.objects.filter(
            account_id=account_id, origin__in=wanted, state=Origin.State.VERIFIED
        ).values_list("origin", flat=True)
    )


def missing(account_id: int | None, urls: Iterable[str]) -> list[str]:
    """The origins of ``urls`` that the account has not proven, in order."""
    origins = origins_of(urls)
    held = proven_by(account_id, origins)
    return [origin for origin in origins if origin not in held]


def refusal(what: str, lacking: list[str]) -> ProblemError:
    """The 403 problem for ``what`` (e.g. "Try it's Send") needing proofs of ``lacking``."""
    names = ", ".join(lacking)
    return ProblemError(
        status=403,
        slug="origin-not-proven",
        title="Proof of origin needed",
        detail=(
            f"{what} sends requests to {names}; the agent's owner has not proven that they run "
            f"{'this origin' if len(lacking) == 1 else 'these origins'}. "
            + HOW.format(origin=lacking[0])
        ),
        extra={"missing_origins": lacking, "how": "/api/v1/origins"},
    )


def require(account_id: int | None, urls: Iterable[str], what: str) -> None:
    """Raise :func:`refusal` unless the account holds a proof for every origin of ``urls``."""
    lacking = missing(account_id, urls)
    if lacking:
        raise refusal(what, lacking)

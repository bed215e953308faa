"""Getting the CI job's OIDC ID token, for trusted publishing.

- GitHub Actions (a job with ``permissions: id-token: write``) sets
  ``ACTIONS_ID_TOKEN_REQUEST_URL`` and ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``: a GET of that URL
  with ``audience=<aud>`` and the request token as bearer answers ``{"value": "<ID token>"}``.
- GitLab CI mints the token itself when the job declares
  ``id_tokens: A2A_REGISTRY_ID_TOKEN: aud: a2a-registry``: it is in that variable.
- Anywhere else (Google Cloud, Buildkite, a local issuer): ``--id-token`` or the same variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import httpx

DEFAULT_AUDIENCE = "a2a-registry"
ID_TOKEN_ENV = "A2A_REGISTRY_ID_TOKEN"
GITHUB_URL_ENV = "ACTIONS_ID_TOKEN_REQUEST_URL"
GITHUB_TOKEN_ENV = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"


class OidcError(Exception):
    """The CI provider did not give an ID token."""


@dataclass(frozen=True)
class IdToken:
    value: str
    source: str  # "github-actions", "gitlab-ci", "environment" or "option"


def github_available(env: Mapping[str, str]) -> bool:
    return bool(env.get(GITHUB_URL_ENV) and env.get(GITHUB_TOKEN_ENV))


def from_github(env: Mapping[str, str], audience: str) -> IdToken:
    """Ask GitHub Actions' token service for an ID token minted for ``audience``."""
    url = env[GITHUB_URL_ENV]
    url += ("&" if "?" in url else "?") + urlencode({"audience": audience})
    headers = {"Authorization": f"Bearer {env[GITHUB_TOKEN_ENV]}"}
    try:
        response = httpx.get(url, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        raise OidcError(f"GitHub Actions' ID token service did not answer: {exc}") from None
    if response.status_code != 200:
        raise OidcError(
            f"GitHub Actions' ID token service answered HTTP {response.status_code}; "
            "does the job have `permissions: id-token: write`?"
        )
    try:
        value = response.json().get("value")
    except (ValueError, AttributeError):
        value = None
    if not isinstance(value, str) or not value:
        raise OidcError("GitHub Actions' ID token service answered without a token (`value`).")
    return IdToken(value, "github-actions")


def find(
    audience: str, explicit: str | None = None, env: Mapping[str, str] | None = None
) -> IdToken | None:
    """The job's ID token: the option, then GitHub Actions, then the environment variable
    (GitLab CI's ``id_tokens``, or any other issuer); None outside CI."""
    env = os.environ if env is None else env
    if explicit:
        return IdToken(explicit, "option")
    if github_available(env):
        return from_github(env, audience)
    value = env.get(ID_TOKEN_ENV)
    if value:
        source = "gitlab-ci" if env.get("GITLAB_CI") else "environment"
        return IdToken(value, source)
    return None

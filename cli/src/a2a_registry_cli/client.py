"""The registry's HTTP API over httpx, and its problem+json errors as exceptions.

Every non-2xx answer becomes :class:`ApiError` carrying the problem's ``type``, ``title`` and
``detail`` (RFC 9457) and a hint saying what to do; a connection that fails becomes
:class:`NetworkError`. Nothing here prints.
"""

from __future__ import annotations

from typing import Any

import httpx

from a2a_registry_cli import __version__

TIMEOUT = httpx.Timeout(60.0, connect=10.0)

# What to do, by problem type (the last path segment of ``type``).
HINTS = {
    "not-authenticated": "Log in first: `a2a-registry login`, or set A2A_REGISTRY_TOKEN.",
    "authentication-failed": (
        "The token is unknown, expired or revoked: make a new one on the registry "
        "(Account > Tokens) and run `a2a-registry login --token ...` again."
    ),
    "token-scope": "Use a token with scope `publish` (or one made for this agent).",
    "origin-not-proven": "Prove the origin: `a2a-registry verify-origin <origin>`.",
    "probe-too-soon": "The agent was checked moments ago; run `a2a-registry check` later.",
    "rate-limited": "Too many requests; wait and try again.",
    "url-registered": "Another account registered this URL; prove its origin to take it over.",
    "agent-deleted": "The agent was deleted; its owner or staff can bring it back.",
    "forbidden": "Only the agent's owner (the verified publisher of its origin) may do this.",
    "invalid-url": "Give the card's public https URL.",
    "fetch-failed": "The registry could not fetch the card; check the URL is public.",
}


class ApiError(Exception):
    """A problem+json answer (or any error status) from the registry."""

    def __init__(self, status: int, body: dict[str, Any], method: str, url: str) -> None:
        self.status = status
        self.body = body
        self.method = method
        self.url = url
        self.type = str(body.get("type") or "")
        self.slug = self.type.rstrip("/").rsplit("/", 1)[-1] if self.type else f"http-{status}"
        self.title = str(body.get("title") or f"HTTP {status}")
        self.detail = str(body.get("detail") or "")
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.title}: {self.detail}" if self.detail else self.title

    @property
    def hint(self) -> str | None:
        return HINTS.get(self.slug)

    @property
    def retry_after(self) -> float | None:
        value = self.body.get("retry_after_seconds")
        return float(value) if isinstance(value, int | float) else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "type": self.type,
            "title": self.title,
            "detail": self.detail,
            "hint": self.hint,
            "request": f"{self.method} {self.url}",
        }


class NetworkError(Exception):
    """The registry could not be reached, or answered something that is not JSON."""


class Registry:
    """One registry at ``base_url``; ``token`` (if any) is sent as a bearer token."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        headers = {"User-Agent": f"a2a-registry-cli/{__version__}", "Accept": "application/json"}
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=TIMEOUT)

    def close(self) -> None:
        self.http.close()

    def request(
        self, method: str, path: str, *, json: Any = None, auth: bool = True
    ) -> tuple[int, Any]:
        """``(status, parsed JSON body)`` of a 2xx answer; raises ApiError or NetworkError."""
        headers = {}
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        url = self.base_url + path
        try:
            response = self.http.request(method, path, json=json, headers=headers)
        except httpx.HTTPError as exc:
            raise NetworkError(f"Could not reach the registry at {url}: {exc}") from None
        body: Any = None
        if response.content:
            try:
                body = response.json()
            except ValueError:
                if response.is_success:
                    raise NetworkError(
                        f"{method} {url} answered HTTP {response.status_code} that is not JSON; "
                        "is --registry the registry's base URL?"
                    ) from None
        if not response.is_success:
            problem = body if isinstance(body, dict) else {}
            if "retry_after_seconds" not in problem and "Retry-After" in response.headers:
                try:
                    problem["retry_after_seconds"] = float(response.headers["Retry-After"])
                except ValueError:
                    pass
            raise ApiError(response.status_code, problem, method, url)
        return response.status_code, body

    # The endpoints the commands use.
    def validate(self, body: Any) -> dict[str, Any]:
        return dict(self.request("POST", "/api/v1/validate", json=body)[1])

    def submit(self, url: str) -> tuple[int, dict[str, Any]]:
        status, body = self.request("POST", "/api/v1/agents", json={"url": url})
        return status, dict(body)

    def agent(self, agent_id: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/api/v1/agents/{agent_id}")[1])

    def recrawl(self, agent_id: str) -> None:
        self.request("POST", f"/api/v1/agents/{agent_id}/recrawl")

    def probe(self, agent_id: str) -> None:
        self.request("POST", f"/api/v1/agents/{agent_id}/probe")

    def claim_origin(self, origin: str) -> dict[str, Any]:
        return dict(self.request("POST", "/api/v1/origins", json={"origin": origin})[1])

    def verify_origin(self, origin_id: int, method: str, jws: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"method": method}
        if jws:
            body["jws"] = jws
        path = f"/api/v1/origins/{origin_id}/verify"
        return dict(self.request("POST", path, json=body)[1])

    def exchange(self, id_token: str, origin: str | None = None) -> dict[str, Any]:
        """A CI job's OIDC ID token for a short-lived publish token (trusted publishing);
        ``origin`` chooses among several origins trusting the same workflow."""
        body = {"token": id_token, **({"origin": origin} if origin else {})}
        path = "/api/v1/trusted-publishing/exchange"
        return dict(self.request("POST", path, json=body, auth=False)[1])

"""The registry's REST API as the multi-host tests call it: over a relay (cluster.url), as one
person on the client host."""

from __future__ import annotations

from typing import Any

import httpx


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Token {token}"} if token else {}


def submit(base: str, token: str, url: str) -> str:
    """Submit ``url``; the agent's id."""
    response = httpx.post(
        f"{base}/api/v1/agents", json={"url": url}, headers=_auth(token), timeout=15
    )
    assert response.status_code in (200, 201, 202), response.text
    return str(response.json()["id"])


def detail(base: str, token: str | None, agent_id: str) -> dict[str, Any] | None:
    """The agent's detail, or None when the node does not answer it (down, 5xx)."""
    try:
        response = httpx.get(f"{base}/api/v1/agents/{agent_id}", headers=_auth(token), timeout=5)
    except httpx.HTTPError:
        return None
    return dict(response.json()) if response.status_code == 200 else None


def status(base: str, token: str | None, agent_id: str) -> str:
    body = detail(base, token, agent_id)
    return "unanswered" if body is None else str(body.get("status"))


def search(base: str, text: str, *, token: str | None = None, **params: str) -> list[Any]:
    """``GET /api/v1/agents?q=text`` (ranked by meaning unless ``mode`` says otherwise)."""
    response = httpx.get(
        f"{base}/api/v1/agents", params={"q": text, **params}, headers=_auth(token), timeout=15
    )
    assert response.status_code == 200, response.text
    return list(response.json()["results"])

"""What every command shares: the registry, the token, --json, and how output and errors go.

Human output goes to stdout; progress of long waits to stderr; with ``--json`` stdout holds
exactly one JSON document (errors too: ``{"ok": false, "error": {...}, "exit_code": n}``) and
nothing is written to stderr but the error's one line.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ParamSpec

import click

from a2a_registry_cli import credentials, exits, oidc
from a2a_registry_cli.client import ApiError, NetworkError, Registry

REGISTRY_ENV = "A2A_REGISTRY_URL"


class Failure(Exception):
    """A command ends with ``code`` and says why (and, when known, what to do)."""

    def __init__(self, message: str, code: int = exits.USAGE, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint


@dataclass
class Session:
    registry_url: str | None
    json_output: bool = False
    audience: str = oidc.DEFAULT_AUDIENCE
    _clients: list[Registry] = field(default_factory=list)

    # Output.
    def say(self, text: str = "") -> None:
        if not self.json_output:
            click.echo(text)

    def progress(self, text: str) -> None:
        if not self.json_output:
            click.echo(text, err=True)

    def emit(self, document: dict[str, Any]) -> None:
        if self.json_output:
            click.echo(json.dumps(document, indent=2, ensure_ascii=False))

    # The registry.
    def base_url(self) -> str:
        if not self.registry_url:
            raise Failure(
                "No registry given.",
                hint=f"Pass --registry https://registry.example or set {REGISTRY_ENV}.",
            )
        return self.registry_url.rstrip("/")

    def client(self, *, token: str | None = None) -> Registry:
        """An anonymous-or-authenticated client (whatever token there is, if any)."""
        base = self.base_url()
        registry = Registry(base, token or credentials.token_for(base))
        self._clients.append(registry)
        return registry

    def authenticated(self, origin: str | None = None) -> Registry:
        """A client with a token: the environment's, the login file's, or, inside a CI job
        with an OIDC ID token, a publish token exchanged for it right now (for ``origin`` when
        several origins trust the job's workflow)."""
        registry = self.client()
        if registry.token:
            return registry
        try:
            found = oidc.find(self.audience)
        except oidc.OidcError as exc:
            raise Failure(str(exc)) from None
        if found is None:
            raise Failure(
                "No token: this command needs one.",
                hint=(
                    f"Run `a2a-registry login --token <token>` or set {credentials.TOKEN_ENV}; "
                    "in GitHub Actions or GitLab CI, register a trusted publisher and the "
                    "job's OIDC token is exchanged by itself."
                ),
            )
        self.progress(f"Exchanging the {found.source} OIDC token for a publish token...")
        registry.token = str(registry.exchange(found.value, origin)["token"])
        return registry

    def close(self) -> None:
        for registry in self._clients:
            registry.close()


P = ParamSpec("P")


def fail(session: Session, message: str, code: int, hint: str | None, extra: Any = None) -> None:
    click.echo(f"Error: {message}", err=True)
    if hint and not session.json_output:
        click.echo(f"  {hint}", err=True)
    if session.json_output:
        error: dict[str, Any] = {"message": message, "hint": hint}
        if extra:
            error.update(extra)
        session.emit({"ok": False, "error": error, "exit_code": code})


def command(body: Callable[..., int]) -> Callable[..., None]:
    """Run a command body that returns its exit code; turn API, network and CLI failures into
    their message, hint and exit code (3 unless said otherwise)."""

    @click.pass_obj
    @functools.wraps(body)
    def wrapper(session: Session, *args: Any, **kwargs: Any) -> None:
        if kwargs.pop("json_output", False):
            session.json_output = True
        try:
            code = body(session, *args, **kwargs)
        except ApiError as exc:
            fail(session, exc.message, exits.USAGE, exc.hint, {"problem": exc.as_dict()})
            code = exits.USAGE
        except NetworkError as exc:
            fail(session, str(exc), exits.USAGE, "Check --registry and the network.")
            code = exits.USAGE
        except Failure as exc:
            fail(session, exc.message, exc.code, exc.hint)
            code = exc.code
        finally:
            session.close()
        sys.stdout.flush()
        if code:
            raise click.exceptions.Exit(code)

    return wrapper


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--json`` on each command too (it may also come before the command's name)."""
    return click.option(
        "--json",
        "json_output",
        is_flag=True,
        help="Print one JSON document on stdout instead of text.",
    )(func)


def default_registry() -> str | None:
    return os.environ.get(REGISTRY_ENV)

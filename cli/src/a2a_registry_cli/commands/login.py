"""``a2a-registry login``: keep a token for the registry, or get one by trusted publishing."""

from __future__ import annotations

import shlex
import sys

import click

from a2a_registry_cli import credentials, exits, oidc
from a2a_registry_cli.client import ApiError
from a2a_registry_cli.session import Failure, Session, command, json_option


def checked(session: Session, token: str) -> None:
    """Refuse a token the registry does not know (401), before storing it."""
    try:
        session.client(token=token).request("GET", "/api/v1/origins")
    except ApiError as exc:
        if exc.status == 401:
            raise Failure(exc.message, hint=exc.hint) from None


@click.command("login")
@click.option("--token", help="A token made on the registry (Account > Tokens), scope publish.")
@click.option(
    "--id-token",
    envvar=oidc.ID_TOKEN_ENV,
    help=f"An OIDC ID token to exchange (default: GitHub Actions' or ${oidc.ID_TOKEN_ENV}).",
)
@click.option(
    "--audience",
    default=oidc.DEFAULT_AUDIENCE,
    show_default=True,
    help="The audience to ask GitHub Actions for (the registry's trusted-publishing audience).",
)
@click.option(
    "--origin",
    help="With OIDC: the origin to publish for, when several trust this workflow.",
)
@click.option(
    "--print",
    "print_export",
    is_flag=True,
    help="Print `export A2A_REGISTRY_TOKEN=...` instead of writing the login file.",
)
@json_option
@command
def login(
    session: Session,
    token: str | None,
    id_token: str | None,
    audience: str,
    origin: str | None,
    print_export: bool,
) -> int:
    """Store a token for the registry.

    With --token, that token. Inside GitHub Actions (a job with `permissions: id-token:
    write`) or GitLab CI (a job with `id_tokens: A2A_REGISTRY_ID_TOKEN: aud: a2a-registry`),
    with no --token, the job's OIDC ID token is exchanged for a publish token that lasts
    minutes and covers the origins of the trusted publisher registered for this repository.
    At a terminal with neither, it asks for the token.

    The token goes to ~/.config/a2a-registry/credentials.json (mode 0600), or, with --print,
    to stdout as a shell line. A2A_REGISTRY_TOKEN, when set, wins over the file.

    \b
    Examples:
      a2a-registry login --token a2ar_...
      eval "$(a2a-registry login --print)"      # in a CI job with OIDC
    """
    base = session.base_url()
    expires_at: str | None = None
    how = "token"
    if not token:
        session.audience = audience
        try:
            found = oidc.find(audience, id_token)
        except oidc.OidcError as exc:
            raise Failure(str(exc)) from None
        if found is not None:
            session.progress(f"Exchanging the {found.source} OIDC token at {base}...")
            answer = session.client(token="").exchange(found.value, origin)
            token, expires_at, how = str(answer["token"]), answer.get("expires_at"), found.source
        elif sys.stdin.isatty() and not session.json_output:
            token = click.prompt("Token", hide_input=True)
        else:
            raise Failure(
                "No token given and no CI OIDC token found.",
                hint="Pass --token, set A2A_REGISTRY_ID_TOKEN, or run inside GitHub Actions "
                "with `permissions: id-token: write`.",
            )
        assert token
    if how == "token":
        checked(session, token)
    document = {"ok": True, "exit_code": exits.OK, "registry": base, "via": how}
    document["expires_at"] = expires_at
    if print_export:
        line = f"export {credentials.TOKEN_ENV}={shlex.quote(token)}"
        if session.json_output:
            document["token"] = token
        else:
            click.echo(line)
    else:
        path = credentials.store(base, token, expires_at)
        document["file"] = str(path)
        until = f", valid until {expires_at}" if expires_at else ""
        session.say(f"Logged in to {base} ({how}{until}); token saved in {path}.")
    session.emit(document)
    return exits.OK

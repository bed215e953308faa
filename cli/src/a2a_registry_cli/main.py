"""The ``a2a-registry`` command group: global options, and usage errors that exit 3."""

from __future__ import annotations

from typing import Any

import click

from a2a_registry_cli import __version__, exits
from a2a_registry_cli.commands.check import check
from a2a_registry_cli.commands.login import login
from a2a_registry_cli.commands.origin import verify_origin
from a2a_registry_cli.commands.publish import publish
from a2a_registry_cli.commands.validate import validate
from a2a_registry_cli.session import REGISTRY_ENV, Session

EPILOG = f"""\b
Environment:
  {REGISTRY_ENV}      the registry's base URL (like --registry)
  A2A_REGISTRY_TOKEN    a token (wins over the one `login` stored)
  A2A_REGISTRY_ID_TOKEN an OIDC ID token to exchange (GitLab CI's id_tokens)

\b
{exits.DESCRIPTION}
"""


class RegistryGroup(click.Group):
    """A click group whose usage errors (bad options, unknown commands) exit 3, not 2, since
    2 means "the live checks failed"."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            setattr(exc, "exit_code", exits.USAGE)  # noqa: B010 - a class variable
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            setattr(exc, "exit_code", exits.USAGE)  # noqa: B010 - a class variable
            raise


@click.group(
    cls=RegistryGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--registry",
    envvar=REGISTRY_ENV,
    metavar="URL",
    help=f"The registry's base URL, e.g. https://registry.example (or ${REGISTRY_ENV}).",
)
@click.option(
    "--json",
    "json_output",
    is_flag=True,
    help="Print one JSON document on stdout (no progress on stderr).",
)
@click.version_option(__version__, prog_name="a2a-registry")
@click.pass_context
def cli(ctx: click.Context, registry: str | None, json_output: bool) -> None:
    """Publish A2A agents to an agent-card registry, from a terminal or a CI job.

    \b
    a2a-registry validate FILE|URL          check a card (no token needed)
    a2a-registry login [--token T]          store a token (in CI: trusted publishing)
    a2a-registry verify-origin ORIGIN       prove that you run an origin
    a2a-registry publish URL                submit or re-crawl, wait, print the verdicts
    a2a-registry check ID                   run the live checks now
    """
    ctx.obj = Session(registry_url=registry, json_output=json_output)


for _command in (validate, login, verify_origin, publish, check):
    cli.add_command(_command)


def run() -> None:
    """The console script's entry point."""
    cli(prog_name="a2a-registry")

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cards import signing_keys
from cards.models import RegistrySigningKey


class Command(BaseCommand):
    help = (
        "Rotate the registry's attestation signing key: a new key signs from now on and the "
        "previous ones stay in /.well-known/jwks.json until retired with --retire."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--retire",
            metavar="KID",
            action="append",
            default=[],
            help="Stop publishing this key instead of rotating (repeatable).",
        )
        parser.add_argument(
            "--list", action="store_true", dest="list_only", help="Only list the keys."
        )

    def handle(self, *args: Any, retire: list[str], list_only: bool, **options: Any) -> None:
        try:
            if retire:
                for kid in retire:
                    signing_keys.retire(kid)
                    self.stdout.write(f"retired {kid}")
            elif not list_only:
                row = signing_keys.rotate()
                self.stdout.write(f"new signing key {row.kid}")
        except signing_keys.SigningKeyError as exc:
            raise CommandError(str(exc)) from None
        for key in RegistrySigningKey.objects.order_by("-created_at", "-id"):
            state = "retired" if key.retired_at else "signing" if key.active else "published"
            self.stdout.write(f"{key.kid}  {state}  created {key.created_at:%Y-%m-%d %H:%M}")

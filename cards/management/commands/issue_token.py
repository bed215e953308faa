from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Create the user if needed and print an API token for 'Authorization: Token <token>'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--staff", action="store_true", help="Make the user staff (admin access)."
        )

    def handle(self, *args: Any, username: str, staff: bool, **options: Any) -> None:
        try:
            self._issue(username, staff)
        except DatabaseError as exc:
            # One line saying what to do, not a traceback (docs/configuration.md).
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CommandError(
                f"the database is not usable ({reason}): check DATABASE_URL, start it "
                "(`make services`) and run `manage.py migrate`"
            ) from None

    def _issue(self, username: str, staff: bool) -> None:
        user, created = get_user_model().objects.get_or_create(username=username)
        if staff and not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        token, _ = Token.objects.get_or_create(user=user)
        if created:
            self.stderr.write(f"created user {username}")
        self.stdout.write(token.key)

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Create the user if needed and print an API token for 'Authorization: Token <token>'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--staff", action="store_true", help="Make the user staff (admin access)."
        )

    def handle(self, *args: Any, username: str, staff: bool, **options: Any) -> None:
        user, created = get_user_model().objects.get_or_create(username=username)
        if staff and not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        token, _ = Token.objects.get_or_create(user=user)
        if created:
            self.stderr.write(f"created user {username}")
        self.stdout.write(token.key)

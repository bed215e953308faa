"""Accounts and servers the publishers' tests share: real accounts, each with an operator token
(`issue_token`'s kind), a challenge or card server and a DNS server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.publishers.dns_server import LocalDns, running_dns
from tests.support import CardServer, running_server


def account(name: str, *, staff: bool = False) -> APIClient:
    """A client speaking for a new account with its token; the account is ``client.user``."""
    user = get_user_model().objects.create_user(
        username=name, email=f"{name}@example.org", is_staff=staff
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user  # type: ignore[attr-defined]
    return client


@pytest.fixture
def alice(db: None) -> APIClient:
    return account("alice")


@pytest.fixture
def bob(db: None) -> APIClient:
    return account("bob")


@pytest.fixture
def carol(db: None) -> APIClient:
    """Never controls any origin of the tests."""
    return account("carol")


@pytest.fixture
def mallory(db: None) -> APIClient:
    """Never controls any origin of the tests, and tries."""
    return account("mallory")


@pytest.fixture
def dns(settings: Any) -> Iterator[LocalDns]:
    with running_dns() as server:
        settings.REGISTRY_DNS_NAMESERVERS = server.nameservers
        yield server


@pytest.fixture
def site(loopback_allowed: None) -> Iterator[CardServer]:
    with running_server() as server:
        yield server

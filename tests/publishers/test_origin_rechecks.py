"""Proofs are re-checked on a schedule and lapse when the record is gone (issue 44 §3): a DNS
record removed, a file taken down, a JWKS key rotated out; a transient failure (SERVFAIL, a
5xx) counts but does not lapse at once, and a success resets the count. The sweep runs as
Celery runs it here (eager), and is in the beat schedule and the in-process one."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from publishers import origins, ownership, tasks
from publishers.models import Origin, OriginEvent
from publishers.proofs import http_file
from registry import schedule_in_process
from tests.publishers.dns_server import LocalDns
from tests.support import CardServer

pytestmark = pytest.mark.django_db

HOST = "agents.example.test"


@pytest.fixture(autouse=True)
def _origin_settings(settings: Any, loopback_allowed: None) -> None:
    settings.REGISTRY_DNS_TIMEOUT_SECONDS = 1.0
    settings.REGISTRY_ORIGIN_RECHECK_FAILURES = 3


@pytest.fixture
def lost(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = ownership.origin_lost

    def on_lost(origin_text: str) -> None:
        seen.append(origin_text)
        real(origin_text)

    monkeypatch.setattr(ownership, "origin_lost", on_lost)
    return seen


def user(name: str) -> Any:
    return get_user_model().objects.create_user(username=name)


def actions(origin: Origin) -> list[str]:
    return list(
        OriginEvent.objects.filter(origin=origin)
        .order_by("created_at", "id")
        .values_list("action", flat=True)
    )


def proven_by_dns(dns: LocalDns, name: str = "alice") -> Origin:
    origin = origins.claim(user(name), f"https://{HOST}")
    dns.zone.records[f"_a2a-registry.{HOST}"] = [f"a2a-registry-verification={origin.challenge}"]
    assert origins.verify(origin, "dns").verified
    origin.refresh_from_db()
    return origin


def test_a_removed_record_lapses_after_the_limit_audited(dns: LocalDns, lost: list[str]) -> None:
    origin = proven_by_dns(dns)
    assert origins.recheck(origin) is not None
    origin.refresh_from_db()
    assert origin.failures == 0 and actions(origin)[-1] == "rechecked"

    del dns.zone.records[f"_a2a-registry.{HOST}"]
    for expected_failures in (1, 2):
        outcome = origins.recheck(origin)
        assert outcome is not None and not outcome.ok
        origin.refresh_from_db()
        assert origin.state == "verified" and origin.failures == expected_failures
        assert "NXDOMAIN" in origin.last_error
        assert lost == []
    origins.recheck(origin)
    origin.refresh_from_db()
    assert origin.state == "lapsed" and origin.failures == 3 and origin.next_check_at is None
    assert actions(origin) == [
        "claimed",
        "verified",
        "rechecked",
        "failed",
        "failed",
        "failed",
        "lapsed",
    ]
    assert lost == [f"https://{HOST}"]
    assert origins.recheck(origin) is None  # a lapsed origin is not re-checked
    # the record is back: proving it again makes it verified again
    dns.zone.records[f"_a2a-registry.{HOST}"] = [f"a2a-registry-verification={origin.challenge}"]
    assert origins.verify(origin, "dns").verified
    origin.refresh_from_db()
    assert origin.state == "verified" and origin.failures == 0


def test_a_transient_failure_does_not_lapse_at_once_and_a_success_resets(
    dns: LocalDns, lost: list[str]
) -> None:
    origin = proven_by_dns(dns)
    dns.zone.failing = True  # SERVFAIL
    outcome = origins.recheck(origin)
    assert outcome is not None and outcome.transient
    origin.refresh_from_db()
    assert origin.state == "verified" and origin.failures == 1
    assert "transient" in origin.last_error
    event = OriginEvent.objects.filter(origin=origin, action="failed").get()
    assert event.detail["transient"] is True and event.detail["recheck"] is True
    dns.zone.failing = False
    origins.recheck(origin)
    origin.refresh_from_db()
    assert origin.state == "verified" and origin.failures == 0 and origin.last_error == ""
    assert lost == []


def test_a_server_error_counts_toward_the_lapse(
    settings: Any, site: CardServer, lost: list[str]
) -> None:
    settings.REGISTRY_ORIGIN_RECHECK_FAILURES = 2
    origin = origins.claim(user("alice"), site.origin)
    path = http_file.challenge_url(origin)[len(site.origin) :]
    site.serve(path, origin.challenge.encode(), content_type="text/plain")
    assert origins.verify(origin, "http").verified
    origin.refresh_from_db()
    site.serve(path, b"down for maintenance", status=503, content_type="text/plain")
    origins.recheck(origin)
    origin.refresh_from_db()
    assert (
        origin.state == "verified"
        and "503" in origin.last_error
        and "transient" in origin.last_error
    )
    origins.recheck(origin)
    origin.refresh_from_db()
    assert origin.state == "lapsed" and lost == [site.origin]


def test_a_jwks_proof_lapses_when_its_key_leaves_the_set(settings: Any, site: CardServer) -> None:
    settings.REGISTRY_ORIGIN_RECHECK_FAILURES = 1
    private = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    site.serve("/.well-known/jwks.json", json.dumps({"keys": [{**jwk, "kid": "old"}]}).encode())
    origin = origins.claim(user("alice"), site.origin)
    token = jwt.encode(
        {"origin": origin.origin, "challenge": origin.challenge},
        private,
        algorithm="ES256",
        headers={"kid": "old"},
    )
    assert origins.verify(origin, "jwks", jws=token).verified
    origin.refresh_from_db()
    assert origins.recheck(origin) is not None
    origin.refresh_from_db()
    assert origin.state == "verified" and actions(origin)[-1] == "rechecked"
    newer = json.loads(
        jwt.algorithms.ECAlgorithm.to_jwk(ec.generate_private_key(ec.SECP256R1()).public_key())
    )
    site.serve("/.well-known/jwks.json", json.dumps({"keys": [{**newer, "kid": "new"}]}).encode())
    cache.clear()  # the JWKS cache would keep the old set until its max-age ends
    outcome = origins.recheck(origin)
    assert outcome is not None and "'old'" in outcome.reason and "gone" in outcome.reason
    origin.refresh_from_db()
    assert origin.state == "lapsed"


def test_the_scheduled_sweep_rechecks_due_origins_through_celery(
    settings: Any, dns: LocalDns
) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER
    origin = proven_by_dns(dns)
    other = proven_by_dns_elsewhere(dns)
    Origin.objects.filter(pk=origin.pk).update(next_check_at=timezone.now() - timedelta(minutes=1))
    tasks.recheck_due_origins.delay()
    origin.refresh_from_db()
    other.refresh_from_db()
    assert actions(origin)[-1] == "rechecked"
    assert origin.next_check_at is not None and origin.next_check_at > timezone.now() + timedelta(
        hours=23
    )
    assert actions(other)[-1] == "verified"  # not due: left alone
    # the batch is bounded, the oldest due first
    Origin.objects.update(next_check_at=timezone.now() - timedelta(minutes=1))
    Origin.objects.filter(pk=other.pk).update(next_check_at=timezone.now() - timedelta(hours=1))
    assert tasks.recheck_due_origins.apply(kwargs={"limit": 1}).get() == 1
    assert actions(other)[-1] == "rechecked"
    assert actions(origin)[-1] == "rechecked" and actions(origin).count("rechecked") == 1


def proven_by_dns_elsewhere(dns: LocalDns) -> Origin:
    host = "second.example.test"
    origin = origins.claim(user("bob"), f"https://{host}")
    dns.zone.records[f"_a2a-registry.{host}"] = [f"a2a-registry-verification={origin.challenge}"]
    assert origins.verify(origin, "dns").verified
    origin.refresh_from_db()
    return origin


def test_the_sweep_is_in_the_beat_schedule_and_runs_in_process(dns: LocalDns) -> None:
    entry = django_settings.CELERY_BEAT_SCHEDULE["recheck-due-origins"]
    assert entry["task"] == "publishers.recheck_due_origins"
    intervals = schedule_in_process.intervals(django_settings.CELERY_BEAT_SCHEDULE)
    assert intervals["recheck-due-origins"] == (
        "publishers.recheck_due_origins",
        django_settings.REGISTRY_ORIGIN_RECHECK_SECONDS,
    )
    origin = proven_by_dns(dns)
    Origin.objects.filter(pk=origin.pk).update(next_check_at=timezone.now() - timedelta(seconds=1))
    # What run_task does by name (without closing the test's database connection, as it would):
    # the worker's task modules, then the task by the name the schedule gives.
    from registry.celery import app

    app.loader.import_default_modules()
    assert app.tasks["publishers.recheck_due_origins"].apply().get() == 1
    assert actions(origin)[-1] == "rechecked"

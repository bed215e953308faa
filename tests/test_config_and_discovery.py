from __future__ import annotations

import ipaddress

import pytest

from cards.discovery import candidate_card_urls, is_origin
from cards.tasks import MAX_RETRY_DELAY, retry_delay
from registry.env import ConfigError, env_bool, env_float, env_int, env_networks, env_ports


def test_an_origin_is_discovered_on_both_well_known_paths_in_order() -> None:
    assert is_origin("https://example.com")
    assert candidate_card_urls("https://example.com") == [
        "https://example.com/.well-known/agent-card.json",
        "https://example.com/.well-known/agent.json",
    ]
    assert candidate_card_urls("https://example.com/my/card.json") == [
        "https://example.com/my/card.json"
    ]


def test_configuration_refuses_bad_values_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ConfigError, match="X_BOOL"):
        env_bool("X_BOOL", False)
    monkeypatch.setenv("X_INT", "12abc")
    with pytest.raises(ConfigError, match="X_INT"):
        env_int("X_INT", 1)
    monkeypatch.setenv("X_FLOAT", "-1")
    with pytest.raises(ConfigError, match="X_FLOAT"):
        env_float("X_FLOAT", 1.0)
    monkeypatch.setenv("X_NETS", "127.0.0.0/8, not-a-net")
    with pytest.raises(ConfigError, match="not-a-net"):
        env_networks("X_NETS")
    monkeypatch.setenv("X_PORTS", "443,70000")
    with pytest.raises(ConfigError, match="70000"):
        env_ports("X_PORTS", [443])


def test_configuration_reads_good_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_BOOL", "TRUE")
    monkeypatch.setenv("X_NETS", "127.0.0.0/8,::1/128")
    assert env_bool("X_BOOL", False) is True
    assert env_networks("X_NETS") == [
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
    ]
    assert env_bool("X_UNSET_FOR_SURE", True) is True


def test_settings_fail_at_start_up_on_a_bad_value(tmp_path: object) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "REGISTRY_FETCH_ALLOW_HTTP": "perhaps"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**env, "DJANGO_SETTINGS_MODULE": "registry.settings"},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "REGISTRY_FETCH_ALLOW_HTTP must be true or false" in result.stderr


def test_retry_delays_grow_and_honour_retry_after() -> None:
    first = [retry_delay(0, None, base=10) for _ in range(50)]
    assert all(5 <= d <= 10 for d in first)
    assert all(40 <= retry_delay(3, None, base=10) <= 80 for _ in range(50))
    assert retry_delay(0, 300, base=10) == 300
    assert retry_delay(20, None, base=10) <= MAX_RETRY_DELAY
    assert retry_delay(0, 10**9, base=10) == MAX_RETRY_DELAY

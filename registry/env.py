"""Typed readers for environment variables that refuse bad values loudly.

Every setting of the registry is read through these helpers in ``registry.settings``; a value
that does not parse stops the process at start-up with the variable's name in the message,
instead of being silently replaced by a default.
"""

from __future__ import annotations

import ipaddress
import os

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(RuntimeError):
    """A configuration variable holds a value the registry cannot use."""


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None else value


def env_optional(name: str) -> str | None:
    return _raw(name)


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false (got {value!r})")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be an integer (got {value!r})") from None
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name} must be at least {minimum} (got {number})")
    return number


def env_float(
    name: str, default: float, *, minimum: float = 0.0, allow_zero: bool = False
) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{name} must be a number (got {value!r})") from None
    if allow_zero and number == 0:
        return number
    if not number > minimum:
        raise ConfigError(f"{name} must be greater than {minimum} (got {number})")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_networks(
    name: str, *, default: tuple[str, ...] = ()
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for item in env_list(name, list(default)):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ConfigError(f"{name}: {item!r} is not a CIDR network") from None
    return networks


def env_ports(name: str, default: list[int]) -> frozenset[int]:
    ports: set[int] = set()
    for item in env_list(name, [str(p) for p in default]):
        try:
            port = int(item)
        except ValueError:
            raise ConfigError(f"{name}: {item!r} is not a port number") from None
        if not 0 < port < 65536:
            raise ConfigError(f"{name}: {port} is not a valid port")
        ports.add(port)
    return frozenset(ports)

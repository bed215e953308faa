"""Interface rules: supportedInterfaces, v0.3 additionalInterfaces and the v0.x main url."""

from __future__ import annotations

import re
from typing import Any

from cards.rules.context import Report, Run
from cards.rules.fields import INTERFACE_FIELDS, KNOWN_BINDINGS
from cards.rules.objects import check_object, dicts
from cards.rules.urls import check_url
from cards.rules.versions import check_protocol_version
from registry.findings import extend_pointer

_BINDING_HINTS = {"REST": "HTTP+JSON", "HTTP": "HTTP+JSON", "JSON-RPC": "JSONRPC"}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def _check_binding(report: Report, value: Any, pointer: str) -> None:
    if not isinstance(value, str) or not value.strip() or value in KNOWN_BINDINGS:
        return
    if _URI.match(value):
        # Spec v1.0 section 5.8: custom bindings SHOULD be URIs.
        report.info("interface.custom-binding", pointer, f"custom protocol binding {value!r}")
        return
    upper = value.upper()
    hint = upper if upper in KNOWN_BINDINGS else _BINDING_HINTS.get(upper)
    suggestion = f"; did you mean {hint!r}?" if hint else ""
    report.warning(
        "interface.unknown-binding",
        pointer,
        f"{value!r} is not JSONRPC, GRPC, HTTP+JSON or a URI{suggestion}",
    )


def _check_interface(run: Run, entry: dict[str, Any], pointer: str, binding_key: str) -> None:
    binding = entry.get(binding_key)
    binding_pointer = extend_pointer(pointer, binding_key)
    if binding_key == "protocolBinding" and "protocolBinding" not in entry:
        # Early v1.0 drafts (corpus 015) said "transport"; still classify the URL by it.
        binding, binding_pointer = entry.get("transport"), extend_pointer(pointer, "transport")
    _check_binding(run.report, binding, binding_pointer)
    check_url(
        run.report,
        run.ctx,
        entry.get("url"),
        extend_pointer(pointer, "url"),
        binding if isinstance(binding, str) else "",
    )
    version_pointer = extend_pointer(pointer, "protocolVersion")
    check_protocol_version(run.report, entry.get("protocolVersion"), version_pointer)


def rule_interfaces(run: Run) -> None:
    data = run.data
    # supportedInterfaces is a v1.0 member: its members are required only in a card judged as
    # v1.0. A card that declares 0.x (rules.versions.judged_shape) is not judged by them.
    v1 = run.judged in ("v1.0", "unknown")
    required = ("url", "protocolBinding", "protocolVersion") if v1 else ()
    for index, entry in dicts(data.get("supportedInterfaces")):
        pointer = extend_pointer("/supportedInterfaces", index)
        check_object(run.report, entry, pointer, INTERFACE_FIELDS, required)
        _check_interface(run, entry, pointer, "protocolBinding")
    for index, entry in dicts(data.get("additionalInterfaces")):
        pointer = extend_pointer("/additionalInterfaces", index)
        check_object(run.report, entry, pointer, INTERFACE_FIELDS, ("url", "transport"))
        _check_interface(run, entry, pointer, "transport")
    if "url" in data:
        # The v0.x main interface: url + preferredTransport (default JSONRPC).
        main = {"url": data["url"], "preferredTransport": data.get("preferredTransport", "JSONRPC")}
        _check_interface(run, main, "", "preferredTransport")

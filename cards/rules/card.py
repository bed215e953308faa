"""Rules for the card object itself: its endpoint, top-level members, provider and links,
capabilities (with extensions) and signature entries."""

from __future__ import annotations

from cards.rules.context import Run
from cards.rules.fields import (
    CAPABILITY_FIELDS,
    CARD_FIELDS,
    EXTENSION_FIELDS,
    PROVIDER_FIELDS,
    REQUIRED_BY_SHAPE,
    SIGNATURE_FIELDS,
)
from cards.rules.objects import check_object, dicts
from cards.rules.urls import check_url
from registry.findings import extend_pointer, json_pointer


def rule_endpoint(run: Run) -> None:
    if run.shape == "unknown" and "supportedInterfaces" not in run.card:
        run.report.error(
            "card.no-endpoint", "", "the card has neither 'supportedInterfaces' nor 'url'"
        )


def rule_top_level(run: Run) -> None:
    check_object(run.report, run.data, "", CARD_FIELDS, REQUIRED_BY_SHAPE[run.judged])
    if run.judged == "v0.3" and "preferredTransport" not in run.data:
        # v0.3 prose makes it REQUIRED; the v0.3 schema only gives a default (JSONRPC).
        run.report.warning(
            "card.missing-preferred-transport",
            "/preferredTransport",
            "v0.3 cards should declare 'preferredTransport' (JSONRPC is assumed)",
        )


def rule_provider_and_links(run: Run) -> None:
    provider = run.data.get("provider")
    if isinstance(provider, dict):
        check_object(run.report, provider, "/provider", PROVIDER_FIELDS, ("organization", "url"))
        check_url(run.report, run.ctx, provider.get("url"), "/provider/url")
    for name in ("documentationUrl", "iconUrl"):
        check_url(run.report, run.ctx, run.data.get(name), json_pointer(name))


def rule_capabilities(run: Run) -> None:
    capabilities = run.data.get("capabilities")
    if not isinstance(capabilities, dict):
        return
    check_object(run.report, capabilities, "/capabilities", CAPABILITY_FIELDS)
    seen: set[str] = set()
    for index, extension in dicts(capabilities.get("extensions")):
        pointer = extend_pointer("/capabilities/extensions", index)
        check_object(run.report, extension, pointer, EXTENSION_FIELDS, ("uri",))
        uri = extension.get("uri")
        if not isinstance(uri, str):
            continue
        uri_pointer = extend_pointer(pointer, "uri")
        if not uri.strip():
            run.report.error("card.empty-value", uri_pointer, "'uri' must not be empty")
        elif uri in seen:
            run.report.warning("extension.duplicate-uri", uri_pointer, f"{uri!r} is declared twice")
        seen.add(uri)


def rule_signatures(run: Run) -> None:
    for index, signature in dicts(run.data.get("signatures")):
        pointer = extend_pointer("/signatures", index)
        check_object(run.report, signature, pointer, SIGNATURE_FIELDS, ("protected", "signature"))

"""Security rules: scheme definitions (v0.3 OpenAPI style or v1.0 wrappers) and the
requirements that refer to them, card-wide and per skill."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cards.rules.context import Report, RuleContext, Run
from cards.rules.fields import SCHEME_FIELDS, STRINGS
from cards.rules.objects import check_object, check_type, dicts, kind_of
from cards.rules.urls import check_url
from registry.findings import extend_pointer

_SCHEME_TYPES = {
    "apiKey": ("in", "name"),
    "http": ("scheme",),
    "oauth2": ("flows",),
    "openIdConnect": ("openIdConnectUrl",),
    "mutualTLS": (),
}
# v1.0 wrapper member -> the members required inside it.
SCHEME_WRAPPERS = {
    "apiKeySecurityScheme": ("location", "name"),
    "httpAuthSecurityScheme": ("scheme",),
    "oauth2SecurityScheme": ("flows",),
    "openIdConnectSecurityScheme": ("openIdConnectUrl",),
    "mtlsSecurityScheme": (),
}
_API_KEY_LOCATIONS = ("query", "header", "cookie")
_FLOW_URL_FIELDS = ("authorizationUrl", "tokenUrl", "refreshUrl", "deviceAuthorizationUrl")


def _scheme_body(
    report: Report, scheme: dict[str, Any], pointer: str
) -> tuple[dict[str, Any], str, tuple[str, ...], str] | None:
    """(members, their pointer, required names, api-key location key) of either scheme form."""
    if "type" in scheme:  # v0.3: OpenAPI style, discriminated by "type"
        kind = scheme["type"]
        required = _SCHEME_TYPES.get(kind) if isinstance(kind, str) else None
        if required is None:
            report.error(
                "security.unknown-scheme-type",
                extend_pointer(pointer, "type"),
                f"unknown scheme type {kind!r}",
            )
            return None
        return scheme, pointer, required, "in"
    wrappers = [key for key in scheme if key in SCHEME_WRAPPERS]  # v1.0: one oneof member
    if len(wrappers) != 1:
        report.error(
            "security.unknown-scheme-type",
            pointer,
            f"expected one of {', '.join(SCHEME_WRAPPERS)} or a 'type'; "
            f"found {', '.join(wrappers) or 'none'}",
        )
        return None
    body, body_pointer = scheme[wrappers[0]], extend_pointer(pointer, wrappers[0])
    if not isinstance(body, dict):
        report.error("card.wrong-type", body_pointer, f"must be an object, not {kind_of(body)}")
        return None
    return body, body_pointer, SCHEME_WRAPPERS[wrappers[0]], "location"


def _check_scheme(report: Report, ctx: RuleContext, scheme: dict[str, Any], pointer: str) -> None:
    found = _scheme_body(report, scheme, pointer)
    if found is None:
        return
    body, body_pointer, required, location_key = found
    check_object(report, body, body_pointer, SCHEME_FIELDS, required)
    location = body.get(location_key)
    if location_key in required and isinstance(location, str):
        if location not in _API_KEY_LOCATIONS:
            report.error(
                "card.invalid-value",
                extend_pointer(body_pointer, location_key),
                f"{location!r} is not one of {', '.join(_API_KEY_LOCATIONS)}",
            )
    for name in ("openIdConnectUrl", "oauth2MetadataUrl"):
        check_url(report, ctx, body.get(name), extend_pointer(body_pointer, name))
    flows = body.get("flows")
    for flow_name, flow in flows.items() if isinstance(flows, dict) else ():
        for name in _FLOW_URL_FIELDS if isinstance(flow, dict) else ():
            where = extend_pointer(body_pointer, "flows", flow_name, name)
            check_url(report, ctx, flow.get(name), where)


def _requirement_names(
    report: Report, entry: dict[str, Any], pointer: str, v1_form_expected: bool
) -> Iterator[tuple[str, str]]:
    """Scheme names used by one requirement (either form), checking the scope lists."""
    if set(entry) == {"schemes"} and isinstance(entry["schemes"], dict):
        for name, scopes in entry["schemes"].items():
            where = extend_pointer(pointer, "schemes", name)
            if not isinstance(scopes, dict):
                message = f"must be an object {{'list': [scopes]}}, not {kind_of(scopes)}"
                report.error("card.wrong-type", where, message)
            elif "list" in scopes:
                check_type(report, scopes["list"], STRINGS, extend_pointer(where, "list"))
            yield name, where
        return
    if v1_form_expected:
        report.error(
            "card.wrong-type",
            pointer,
            "must be {'schemes': {name: {'list': [scopes]}}}, not the v0.3 {name: [scopes]} form",
        )
    for name, scopes in entry.items():
        where = extend_pointer(pointer, name)
        if not v1_form_expected:
            check_type(report, scopes, STRINGS, where)
        yield name, where


def _requirement_lists(data: dict[str, Any]) -> Iterator[tuple[Any, str, bool]]:
    """(requirements, pointer, v1.0 form expected) for the card and every skill."""
    holders = [(data, "")]
    holders += [(skill, extend_pointer("/skills", i)) for i, skill in dicts(data.get("skills"))]
    for holder, base in holders:
        for key in ("securityRequirements", "security"):
            yield holder.get(key), extend_pointer(base, key), key == "securityRequirements"


def rule_security(run: Run) -> None:
    schemes = run.data.get("securitySchemes")
    declared = set(schemes) if isinstance(schemes, dict) else set()
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        pointer = extend_pointer("/securitySchemes", name)
        if isinstance(scheme, dict):
            _check_scheme(run.report, run.ctx, scheme, pointer)
        else:
            run.report.error(
                "card.wrong-type", pointer, f"must be an object, not {kind_of(scheme)}"
            )
    for requirements, pointer, v1_form in _requirement_lists(run.data):
        for index, entry in dicts(requirements):
            entry_pointer = extend_pointer(pointer, index)
            for name, where in _requirement_names(run.report, entry, entry_pointer, v1_form):
                if name not in declared:
                    run.report.error(
                        "security.undeclared-scheme", where, f"{name!r} is not in 'securitySchemes'"
                    )

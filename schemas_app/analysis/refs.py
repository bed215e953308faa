"""$ref resolution inside one schema: its resources, JSON pointers, and the problems of refs that do
not resolve offline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from registry.findings import json_pointer
from schemas_app.analysis.model import Problem
from schemas_app.keywords import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS
from schemas_app.validation import DRAFT4, DRAFT6, DRAFT7, is_metaschema_uri

# The synthetic base URI of a schema without $id. ".invalid" is reserved (RFC 2606): it never
# names anything, and nothing is ever fetched anyway.
_BASE = "https://registry.invalid/schema.json"

_OLD_DRAFTS = (DRAFT4, DRAFT6, DRAFT7)

_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


@dataclass
class _Resources:
    nodes: dict[str, Any] = field(default_factory=dict)  # resource URI -> its schema node
    anchors: set[tuple[str, str]] = field(default_factory=set)  # (resource URI, anchor)
    refs: list[tuple[str, str, str, str]] = field(default_factory=list)  # key, value, base, ptr


def _children(node: dict[str, Any], draft: str) -> list[tuple[tuple[str | int, ...], Any]]:
    """The subschemas of ``node`` with their relative paths."""
    out: list[tuple[tuple[str | int, ...], Any]] = []
    for key in SCHEMA_KEYS:
        if key in node:
            out.append(((key,), node[key]))
    for key in SCHEMA_LIST_KEYS:
        if isinstance(node.get(key), list):
            out.extend(((key, i), sub) for i, sub in enumerate(node[key]))
    for key in SCHEMA_MAP_KEYS:
        if isinstance(node.get(key), dict):
            out.extend(((key, name), sub) for name, sub in node[key].items())
    items = node.get("items")
    if isinstance(items, list):
        out.extend((("items", i), sub) for i, sub in enumerate(items))
    elif items is not None:
        out.append((("items",), items))
    dependencies = node.get("dependencies")
    if isinstance(dependencies, dict):
        out.extend(
            (("dependencies", name), sub)
            for name, sub in dependencies.items()
            if isinstance(sub, (dict, bool))
        )
    return out


def _collect(content: Any, draft: str) -> _Resources:
    found = _Resources(nodes={_BASE: content})
    id_key = "id" if draft == DRAFT4 else "$id"
    stack: list[tuple[Any, tuple[str | int, ...], str]] = [(content, (), _BASE)]
    while stack:
        node, path, base = stack.pop()
        if not isinstance(node, dict):
            continue
        own_id = node.get(id_key)
        if isinstance(own_id, str) and own_id:
            if own_id.startswith("#") and draft in _OLD_DRAFTS:
                found.anchors.add((urldefrag(base)[0], own_id[1:]))  # draft <= 7 anchor form
            else:
                base = urljoin(base, own_id) if not own_id.startswith("#") else base
                resource, fragment = urldefrag(base)
                found.nodes.setdefault(resource, node)
                if fragment and draft in _OLD_DRAFTS:
                    found.anchors.add((resource, fragment))
                base = resource
        for anchor_key in ("$anchor", "$dynamicAnchor"):
            anchor = node.get(anchor_key)
            if isinstance(anchor, str):
                found.anchors.add((urldefrag(base)[0], anchor))
        for key in _REF_KEYS:
            value = node.get(key)
            if isinstance(value, str):
                found.refs.append((key, value, base, json_pointer(*path, key)))
        for sub_path, sub in _children(node, draft):
            stack.append((sub, path + sub_path, base))
    return found


def resolve_pointer(root: Any, fragment: str) -> tuple[bool, Any]:
    """Follow an RFC 6901 pointer (percent-encoded, as in a URI fragment) from ``root``."""
    node = root
    if not fragment:
        return True, node
    for raw in unquote(fragment).split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _ref_problems(content: Any, draft: str) -> list[Problem]:
    found = _collect(content, draft)
    problems: list[Problem] = []
    for key, value, base, pointer in found.refs:
        if value.startswith("#"):
            target = urldefrag(base)[0] + value
        else:
            target = urljoin(base, value)
        resource, fragment = urldefrag(target)
        if resource in found.nodes:
            node = found.nodes[resource]
            if fragment.startswith("/") or not fragment:
                ok, _ = resolve_pointer(node, fragment)
            else:
                ok = (resource, unquote(fragment)) in found.anchors
            if not ok:
                problems.append(
                    Problem(
                        "schema.unresolvable-ref",
                        "error",
                        pointer,
                        f"{key} {value!r} points at nothing in this schema",
                    )
                )
        elif is_metaschema_uri(resource):
            continue  # an official metaschema: bundled, resolved offline
        else:
            problems.append(
                Problem(
                    "schema.remote-ref",
                    "warning",
                    pointer,
                    f"{key} {value!r} refers to another document; the registry never fetches "
                    "one, so it cannot validate against this schema",
                )
            )
    return problems

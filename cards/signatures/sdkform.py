"""The a2a-sdk canonical form of a card, computed in plain Python (no protobuf round trip).

a2a-sdk 1.3.0 signs ``MessageToDict(parse_agent_card(card))`` minus ``signatures``, with
"", [], {} and null removed bottom-up, in RFC 8785. ``build`` computes that same value
directly from the served JSON, about ten times faster:

* the v0.3 -> v1.0 mapping of ``parse_agent_card`` (``supportsAuthenticatedExtendedCard``,
  ``url``/``preferredTransport``/``protocolVersion``/``additionalInterfaces``, ``security``
  on the card and on skills, ``type``-style security schemes), without touching the input;
* ``ParseDict(..., ignore_unknown_fields=True)``: only the fields of the SDK's own message
  descriptors are kept (read once from ``a2a.types.a2a_pb2``, so the field set is the SDK's),
  under their JSON name or their proto name, written under the JSON name;
* ``MessageToDict``: a bool without presence (``required``, ``pkceRequired``) is written only
  when true, an optional one (``streaming``) also when false; numbers in ``params`` (a
  ``google.protobuf.Struct``) are doubles;
* the empty-value cleaning, done on the way.

``build`` raises ``Unsupported`` for every input it does not reproduce exactly; the caller
then runs the SDK itself (``canonical.sdk_form_reference``). Those are input the SDK rejects
or reads by accident, and rare corners:

* a value of the wrong JSON type for its field (a number for a string, an object for a list,
  a number or a list naming a field for an object, null inside a list or map);
* v0.3 members the SDK cannot map (``security`` not a list of objects, ``skills`` not a list
  of objects, ``securitySchemes`` not an object of objects, ``additionalInterfaces`` not a
  list of objects, ``capabilities`` not an object when ``supportsAuthenticatedExtendedCard``
  is set, an unhashable scheme ``type``);
* a key in brackets (protobuf's extension syntax, an error to the SDK) or not a string;
* a message or optional field given twice (``iconUrl`` and ``icon_url``: the SDK merges the
  messages, and refuses two values of an optional field), or two members of one oneof;
* text with surrogate code points (the SDK refuses unpaired ones);
* numbers in ``params`` that are integers beyond ±(2^53-1) (the SDK rounds them to doubles),
  NaN or infinite, or values that are not JSON types;
* ``params`` nested deeper than ``MAX_PARAMS_DEPTH`` (the SDK stops at 100 message levels);
* a field of a kind this module does not know (none in a2a-sdk 1.3.0: a future SDK with, say,
  an enum field keeps working, through the fallback, until this module learns it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cards.signatures.sdkform_v03 import Unsupported, v1_view

MAX_PARAMS_DEPTH = 32  # JSON nesting inside params we reproduce; deeper goes to the SDK
_SAFE_INT = 2**53 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_DROP = object()  # removed by the empty-value cleaning
# Field kinds.
_STR, _BOOL, _MSG, _STRUCT, _REP_STR, _REP_MSG, _MAP_STR, _MAP_MSG, _OTHER = range(9)


@dataclass(eq=False)
class _Field:
    out: str  # the JSON name MessageToDict writes
    kind: int
    presence: bool  # an optional/oneof scalar: written even when false
    other: str | None  # the field's other accepted spelling (proto name vs JSON name)
    oneof: str | None  # a real oneof with several members
    sub: dict[str, _Field] = field(default_factory=dict)  # fields of the message kinds


@dataclass
class Result:
    """The cleaned MessageToDict value, and whether RFC 8785 needs the full serialiser."""

    value: Any
    needs_full: bool = False


# --- the SDK's field set, from its message descriptors -----------------------------------------


def _kind(fd: Any) -> tuple[int, Any]:
    """(kind, message descriptor whose fields the kind reads, or None)."""
    message = fd.message_type
    if message is not None and message.GetOptions().map_entry:
        value = message.fields_by_name["value"]
        if message.fields_by_name["key"].type != fd.TYPE_STRING:
            return _OTHER, None
        if value.type == fd.TYPE_STRING:
            return _MAP_STR, None
        inner = value.message_type
        if inner is not None and not inner.full_name.startswith("google.protobuf."):
            return _MAP_MSG, inner
        return _OTHER, None
    if message is not None:
        if message.full_name == "google.protobuf.Struct" and not fd.is_repeated:
            return _STRUCT, None
        if message.full_name.startswith("google.protobuf."):
            return _OTHER, None
        return (_REP_MSG if fd.is_repeated else _MSG), message
    if fd.type == fd.TYPE_STRING:
        return (_REP_STR if fd.is_repeated else _STR), None
    if fd.type == fd.TYPE_BOOL and not fd.is_repeated:
        return _BOOL, None
    return _OTHER, None


def _compile(descriptor: Any, done: dict[str, dict[str, _Field]]) -> dict[str, _Field]:
    """Accepted key -> field, for one message type (both spellings of each field)."""
    if descriptor.full_name in done:
        return done[descriptor.full_name]
    fields: dict[str, _Field] = {}
    done[descriptor.full_name] = fields
    for fd in descriptor.fields:
        kind, inner = _kind(fd)
        oneof = fd.containing_oneof
        real_oneof = oneof.name if oneof is not None and len(oneof.fields) > 1 else None
        spellings = dict.fromkeys((fd.json_name, fd.name))
        for name in spellings:
            others = [s for s in spellings if s != name]
            fields[name] = _Field(
                out=fd.json_name,
                kind=kind,
                presence=bool(fd.has_presence),
                other=others[0] if others else None,
                oneof=real_oneof,
            )
            if inner is not None:
                fields[name].sub = _compile(inner, done)
    return fields


@cache
def card_fields() -> dict[str, _Field]:
    """The AgentCard fields of the installed a2a-sdk (read once per process)."""
    from a2a.types import a2a_pb2  # lazy: the SDK's protobuf types, read once (start-up cost)

    return _compile(a2a_pb2.AgentCard.DESCRIPTOR, {})


# --- ParseDict + MessageToDict + cleaning -------------------------------------------------------
# Text is not checked for surrogates here: every kept string ends up in the output, whose UTF-8
# encoding then fails, and the caller falls back to the SDK. Keys of maps and Structs are
# checked, because their entry may be cleaned away while the SDK still refuses the key.


def _has_surrogates(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (TypeError, ValueError):
        raise Unsupported("a value that is not JSON") from None
    return False


def _key(key: Any, result: Result) -> None:
    if type(key) is not str:
        raise Unsupported("a key that is not a string")
    if not key.isascii():
        if _SURROGATE.search(key):
            raise Unsupported("a key with surrogate code points")
        if any(ord(ch) > 0xFFFF for ch in key):
            result.needs_full = True  # RFC 8785 orders keys by UTF-16 code units


def _number(value: Any, result: Result) -> Any:
    """A number in a Struct: a double in the SDK, written as RFC 8785 writes it."""
    if type(value) is int:
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        raise Unsupported("an integer beyond 2^53 in params")
    if value != value or value in (float("inf"), float("-inf")):
        raise Unsupported("NaN or infinity in params")
    if value.is_integer() and abs(value) <= _SAFE_INT:
        return int(value)  # "1.0" -> "1", as Number::toString writes it
    result.needs_full = True
    return value


def _value(value: Any, depth: int, result: Result) -> Any:
    """One google.protobuf.Value, cleaned; _DROP when cleaning removes it."""
    kind = type(value)
    if kind is str:
        return value if value else _DROP
    if kind is bool:
        return value
    if kind is dict:
        struct = _struct(value, depth + 1, result)
        return struct if struct else _DROP
    if kind is list:
        if depth >= MAX_PARAMS_DEPTH:
            raise Unsupported("params nested too deeply")
        kept = []
        for item in value:
            cleaned = _value(item, depth + 1, result)
            if cleaned is not _DROP:
                kept.append(cleaned)
        return kept if kept else _DROP
    if value is None:
        return _DROP
    if kind is int or kind is float:
        return _number(value, result)
    raise Unsupported(f"{kind.__name__} in params")


def _struct(value: Any, depth: int, result: Result) -> dict[str, Any]:
    if type(value) is not dict:
        raise Unsupported("a Struct that is not an object")
    if depth > MAX_PARAMS_DEPTH:
        raise Unsupported("params nested too deeply")
    out: dict[str, Any] = {}
    for key, item in value.items():
        _key(key, result)
        cleaned = _value(item, depth, result)
        if cleaned is not _DROP:
            out[key] = cleaned
    return out


def _strings(value: Any) -> list[str]:
    if type(value) is not list:
        raise Unsupported("a list of strings expected")
    try:
        "".join(value)  # in C: a TypeError names any item that is not a string
    except TypeError:
        raise Unsupported("a list of strings expected") from None
    return [item for item in value if item]


def _not_an_object(js: Any, fields: dict[str, _Field]) -> dict[str, Any]:
    """ParseDict walks a string or a list where a message belongs as if it held member names
    (v0.3 cards with ``capabilities: ["streaming"]`` exist): names it does not know leave an
    empty message. Anything else it refuses, or reads in ways left to the SDK."""
    if type(js) is str or type(js) is list:
        for name in js:  # a string: its characters
            if type(name) is not str or name in fields or name[:1] == "[":
                break
            if not name.isascii() and _SURROGATE.search(name):
                break
        else:
            return {}
    raise Unsupported("an object expected")


def _message(js: Any, fields: dict[str, _Field], result: Result) -> dict[str, Any]:
    """One message: its known fields converted and cleaned, unknown ones dropped."""
    if type(js) is not dict:
        return _not_an_object(js, fields)
    out: dict[str, Any] = {}
    oneofs: set[str] | None = None
    for key, value in js.items():
        spec = fields.get(key)
        if spec is None:
            # An unknown name is looked up in the descriptor (as UTF-8) and matched against the
            # extension syntax "[...]": a surrogate or a bracket makes the SDK fail.
            if type(key) is not str or key[:1] == "[":
                raise Unsupported("a key ParseDict rejects")
            if not key.isascii() and _SURROGATE.search(key):
                raise Unsupported("a key with surrogate code points")
            continue
        if spec.other is not None and spec.other in js:
            # Both spellings: ParseDict reads them in order, each one replacing (or, null,
            # clearing) what the other set; two values for a field with presence (a message
            # is merged, an optional scalar counts as a oneof) are left to the SDK.
            if value is not None and js[spec.other] is not None:
                if spec.presence or spec.oneof is not None:
                    raise Unsupported(f"{spec.out} given under both of its names")
            if _has_surrogates(js[spec.other]) or _has_surrogates(value):
                raise Unsupported("text with surrogate code points")  # may be replaced away
            out.pop(spec.out, None)
        if value is None:
            continue  # ParseDict: null clears the field
        if spec.oneof is not None:
            oneofs = oneofs if oneofs is not None else set()
            if spec.oneof in oneofs:
                raise Unsupported(f"two members of oneof {spec.oneof}")
            oneofs.add(spec.oneof)
        kind = spec.kind
        if kind == _STR:
            if not isinstance(value, str):
                raise Unsupported("a string expected")
            if value:
                out[spec.out] = value
            continue
        converted: Any
        if kind == _REP_STR:
            converted = _strings(value)
        elif kind == _REP_MSG:
            if type(value) is not list:
                raise Unsupported("a list expected")
            converted = []
            for item in value:
                message = _message(item, spec.sub, result)
                if message:
                    converted.append(message)
        elif kind == _MSG:
            converted = _message(value, spec.sub, result)
        elif kind == _BOOL:
            if type(value) is not bool:
                raise Unsupported("a boolean expected")
            if value or spec.presence:  # MessageToDict skips a false bool without presence
                out[spec.out] = value
            continue
        elif kind == _STRUCT:
            converted = _struct(value, 1, result)
        elif kind == _MAP_STR:
            if type(value) is not dict:
                raise Unsupported("a map of strings expected")
            converted = {}
            for name, text in value.items():
                _key(name, result)
                if not isinstance(text, str):
                    raise Unsupported("a map of strings expected")
                if text:
                    converted[name] = text
        elif kind == _MAP_MSG:
            if type(value) is not dict:
                raise Unsupported("a map expected")
            converted = {}
            for name, item in value.items():
                _key(name, result)
                message = _message(item, spec.sub, result)
                if message:
                    converted[name] = message
        else:
            raise Unsupported(f"field {spec.out} is of a kind this builder does not know")
        if converted:
            out[spec.out] = converted
    return out


def build(data: dict[str, Any]) -> Result:
    """The cleaned a2a-sdk form of ``data`` (``value`` None when nothing is left).

    Raises Unsupported for input the SDK path must handle (see the module docstring). The
    strings are those of ``data``: the caller must check that they encode as UTF-8.
    """
    result = Result(None)
    card = _message(v1_view(data), card_fields(), result)
    result.value = card if card else None
    return result

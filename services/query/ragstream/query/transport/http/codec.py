"""HTTP bodies and query strings <-> protobuf messages, in protobuf's JSON mapping.

Requests: a JSON object parsed by `google.protobuf.json_format` (field names in lowerCamelCase
or as in the proto; enums by name; 64-bit integers as numbers or strings), or, for the read
routes, a query string of top-level fields (`?workspace=demo&docIds=a&docIds=b`). A body that
does not parse is refused with INVALID_ARGUMENT naming the first field at fault, as the gate
names the fields a rule rejects. Responses print every field, defaults included, so clients
need not know proto3's default values.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from multidict import MultiMapping

from ragstream.query.transport import rejections
from ragstream.query.transport.validation import Violation

M = TypeVar("M", bound=Message)
QUERY = "invalid query string"
BODY = "(body)"
"""The field path that blames the body as a whole."""
Desc = Any
"""A message Descriptor (the pure-Python or the upb one, whichever protobuf runs on)."""
Field = Any
"""A FieldDescriptor, likewise."""
MAX_DEPTH = 32
"""Deepest nesting of a JSON body. Requests nest five levels at most (documents[].metadata);
deeper bodies are refused before protobuf, whose parser and our error locator recurse."""
_LEAF_TYPES = frozenset({"google.protobuf.Timestamp", "google.protobuf.Duration"})


def to_json(message: Message, defaults: bool = True) -> dict[str, Any]:
    printed: dict[str, Any] = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=defaults
    )
    return printed


def parse_body(raw: bytes, message: M) -> M:
    """The message a JSON body describes; an empty body is the empty message."""
    if not raw.strip():
        return message
    too_deep = f"must not nest arrays and objects more than {MAX_DEPTH} deep"
    try:
        data = json.loads(raw)
    except RecursionError:
        raise _bad(BODY, too_deep) from None
    except (ValueError, UnicodeDecodeError):
        raise _bad(BODY, "must be a JSON object (application/json, UTF-8)") from None
    if depth(data) > MAX_DEPTH:
        raise _bad(BODY, too_deep)
    return parse_dict(data, message)


def depth(data: object) -> int:
    """How deep arrays and objects nest in `data` (a scalar: 0), counted without recursion
    and no further than one level past MAX_DEPTH."""
    deepest = 0
    pending: list[tuple[object, int]] = [(data, 1)]
    while pending and deepest <= MAX_DEPTH:
        value, level = pending.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, level)
            pending.extend((item, level + 1) for item in value)
    return deepest


def parse_dict(data: object, message: M, what: str = "invalid JSON body") -> M:
    if not isinstance(data, dict):
        raise _bad(BODY, "must be a JSON object", what)
    try:
        json_format.ParseDict(data, message)
    except json_format.ParseError:
        field, description = locate(data, message.DESCRIPTOR, "")
        raise _bad(field, description, what) from None
    return message


def parse_query(query: MultiMapping[str], message: M) -> M:
    """A query string (aiohttp's MultiDict) of top-level fields; repeated fields repeat."""
    fields = _fields(message.DESCRIPTOR)
    data: dict[str, object] = {}
    for name in dict.fromkeys(query.keys()):
        field = fields.get(name)
        if field is None or (field.message_type is not None and not _is_leaf(field)):
            raise _bad(name, f"is not a query parameter of {message.DESCRIPTOR.full_name}", QUERY)
        values = [_scalar(field, v) for v in query.getall(name)]
        data[name] = values if field.is_repeated else values[-1]
    return parse_dict(data, message, QUERY)


def _scalar(field: Field, text: str) -> object:
    """Query values are text; JSON's booleans are not, so they are read here."""
    if field.type == FieldDescriptor.TYPE_BOOL and text in ("true", "false"):
        return text == "true"
    return text


def _fields(descriptor: Desc) -> dict[str, Field]:
    by_json = {f.json_name: f for f in descriptor.fields}
    return {**by_json, **{f.name: f for f in descriptor.fields}}


def _is_leaf(field: Field) -> bool:
    return field.message_type is not None and (
        field.message_type.full_name in _LEAF_TYPES or field.message_type.GetOptions().map_entry
    )


def locate(data: object, descriptor: Desc, prefix: str) -> tuple[str, str]:
    """(field path, what is wrong) of the first value json_format refused."""
    if not isinstance(data, dict):
        return prefix.rstrip(".") or BODY, "must be a JSON object"
    fields = _fields(descriptor)
    for name, value in data.items():
        field = fields.get(name)
        if field is None:
            return f"{prefix}{name}", f"is not a field of {descriptor.full_name}"
        path = prefix + field.name
        if value is None:
            continue  # null: the field's default
        if field.message_type is not None and not _is_leaf(field):
            found = _locate_messages(value, field, path)
        else:
            found = _locate_value(name, value, field, descriptor, path)
        if found is not None:
            return found
    return prefix.rstrip(".") or BODY, "is not valid for this request"


def _locate_messages(value: object, field: Field, path: str) -> tuple[str, str] | None:
    if not field.is_repeated:
        return _first_fault(value, field.message_type, f"{path}.")
    if not isinstance(value, list):
        return path, "must be a JSON array"
    for index, item in enumerate(value):
        found = _first_fault(item, field.message_type, f"{path}[{index}].")
        if found is not None:
            return found
    return None


def _first_fault(value: object, descriptor: Desc, prefix: str) -> tuple[str, str] | None:
    if not isinstance(value, dict):
        return prefix.rstrip("."), "must be a JSON object"
    message = message_factory.GetMessageClass(descriptor)()
    try:
        json_format.ParseDict(value, message)
    except json_format.ParseError:
        return locate(value, descriptor, prefix)
    return None


def _locate_value(
    name: str, value: object, field: Field, owner: Desc, path: str
) -> tuple[str, str] | None:
    listed = field.is_repeated and not _is_leaf(field)
    if listed and not isinstance(value, list):
        return path, "must be a JSON array"
    items: Sequence[object] = value if listed and isinstance(value, list) else [value]
    for index, item in enumerate(items):
        probe = message_factory.GetMessageClass(owner)()
        try:
            json_format.ParseDict({name: [item] if listed else item}, probe)
        except json_format.ParseError:
            return path + (f"[{index}]" if listed else ""), expected(field)
    return None


def expected(field: Field) -> str:
    """What a field's JSON value must be, without quoting the value given."""
    if field.enum_type is not None:
        names = ", ".join(v.name for v in field.enum_type.values)
        return f"must be one of {names}"
    if _is_leaf(field):
        kind = field.message_type.full_name
        if field.message_type.GetOptions().map_entry:
            return "must be a JSON object of strings"
        return f"must be a {kind} in its JSON form (e.g. an RFC 3339 time)"
    kinds = {
        FieldDescriptor.CPPTYPE_STRING: "a JSON string",
        FieldDescriptor.CPPTYPE_BOOL: "true or false",
        FieldDescriptor.CPPTYPE_DOUBLE: "a number",
        FieldDescriptor.CPPTYPE_FLOAT: "a number",
    }
    return f"must be {kinds.get(field.cpp_type, 'an integer (a number or a string of digits)')}"


def _bad(field: str, description: str, what: str = "invalid JSON body") -> rejections.Rejected:
    return rejections.invalid([Violation(field, description)], what)

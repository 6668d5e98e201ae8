"""JSON text by orjson: the same text `json` writes for what the stores hold, and read back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragstream.common import json_text

SCALARS = st.none() | st.booleans() | st.integers() | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
SCALARS_64 = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
VALUES_64 = st.recursive(
    SCALARS_64, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(VALUES)
def test_the_text_is_what_json_writes(value: Any) -> None:
    # Integers beyond 64 bits included: orjson refuses them, json writes them.
    assert json_text.dumps(value) == reference(value)
    assert json_text.dumps_bytes(value) == reference(value).encode()


@given(VALUES_64)
def test_what_dumps_writes_loads_reads_back(value: Any) -> None:
    assert json_text.loads(json_text.dumps(value)) == value


@given(st.recursive(SCALARS_64 | FLOATS, st.lists, max_leaves=20))
def test_floats_read_back_as_the_same_numbers(value: Any) -> None:
    assert json_text.loads(json_text.dumps(value)) == json.loads(reference(value))


def test_integers_beyond_64_bits_are_written_exactly_and_read_as_floats() -> None:
    # The documented limit of orjson's reading (json_text's docstring).
    beyond = [-(2**63) - 1, 2**64]
    assert json_text.dumps(beyond) == "[-9223372036854775809,18446744073709551616]"
    assert json_text.loads(json_text.dumps(beyond)) == [float(-(2**63) - 1), float(2**64)]
    assert json_text.loads("[-9223372036854775808,18446744073709551615]") == [
        -(2**63),
        2**64 - 1,
    ]


def test_keys_that_are_not_strings_become_strings_as_json_makes_them() -> None:
    assert json_text.dumps({1: "x", "b": [1, 2]}) == '{"1":"x","b":[1,2]}'


def test_what_json_cannot_write_is_json_s_error_and_bad_text_a_value_error() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_text.dumps({"a": object()})
    with pytest.raises(ValueError):
        json_text.loads('{"a": ')

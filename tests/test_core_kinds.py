"""The one wording for what kind of JSON value a value is."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.kinds import json_kind, json_type

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@pytest.mark.parametrize(
    ("value", "kind", "phrase"),
    [
        (None, "null", "null"),
        (True, "boolean", "a boolean"),
        (False, "boolean", "a boolean"),
        (3, "integer", "an integer"),
        (3.0, "number", "a number"),
        ("x", "string", "a string"),
        ([], "array", "an array"),
        ({}, "object", "an object"),
        (b"x", "bytes", "bytes"),
        ((1,), "tuple", "tuple"),
    ],
)
def test_each_kind_has_one_name_and_one_phrase(value: object, kind: str, phrase: str) -> None:
    assert json_type(value) == kind
    assert json_kind(value) == phrase


@given(json_values)
def test_a_decoded_value_has_a_json_schema_type_and_its_phrase_names_it(value: object) -> None:
    decoded = json.loads(json.dumps(value))
    kind = json_type(decoded)
    assert kind in {"null", "boolean", "integer", "number", "string", "array", "object"}
    assert json_kind(decoded).endswith(kind)

"""``KEY=VALUE`` words read by a tool's input schema (``trio_mcp.cli._values``): pure functions.

Examples for each rule, then properties with Hypothesis: a value of a type
written as JSON reads back as itself under a schema of that type; a string
argument keeps its text whatever it looks like; with no schema, the reading
is the JSON one when the text parses; and whatever the schema (hostile,
recursive, enormous) and the text, the answer is a value of one of the
allowed types or an `ArgumentValueError`, never another exception.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from trio_mcp.cli._values import (
    KINDS,
    ArgumentValueError,
    argument_kinds,
    convert_arguments,
    convert_value,
    describe_kinds,
    guess_value,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "on": {"type": "boolean"},
        "nothing": {"type": "null"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "point": {"type": "object", "properties": {"x": {"type": "number"}}},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "either": {"type": ["string", "integer"]},
        "color": {"enum": ["red", "green"]},
        "level": {"enum": [1, 2, 3]},
        "ref": {"$ref": "#/$defs/Count"},
        "loose": {"description": "anything"},
    },
    "$defs": {"Count": {"type": "integer", "minimum": 0}},
}


def convert(**pairs: str):
    return convert_arguments(pairs, SCHEMA)


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("text", "123", "123"),
        ("text", "true", "true"),
        ("text", "null", "null"),
        ("text", '{"a": 1}', '{"a": 1}'),
        ("text", "", ""),
        ("n", "3", 3),
        ("n", "-7", -7),
        ("n", "3.0", 3),
        ("n", "1e3", 1000),
        ("x", "1.5", 1.5),
        ("x", "2", 2),
        ("on", "true", True),
        ("on", "False", False),
        ("on", "yes", True),
        ("on", "off", False),
        ("nothing", "null", None),
        ("nothing", "", None),
        ("tags", '["a", "b"]', ["a", "b"]),
        ("point", '{"x": 1}', {"x": 1}),
        ("maybe", "4", 4),
        ("maybe", "null", None),
        ("either", "12", 12),
        ("either", "twelve", "twelve"),
        ("color", "red", "red"),
        ("color", "123", "123"),
        ("level", "2", 2),
        ("ref", "5", 5),
        # Not described: the JSON reading when it parses, else the text.
        ("loose", "5", 5),
        ("loose", "five", "five"),
        ("unknown", "[1]", [1]),
        ("unknown", "{nope", "{nope"),
    ],
)
def test_values_are_read_by_the_schema(name, text, value):
    converted = convert(**{name: text})
    assert converted == {name: value}
    assert type(converted[name]) is type(value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("n", "three", "argument 'n': expected an integer, got 'three'"),
        ("n", "1.5", "argument 'n': expected an integer, got '1.5'"),
        ("n", "true", "argument 'n': expected an integer, got 'true'"),
        ("x", "NaN", "argument 'x': expected a number, got 'NaN'"),
        ("x", "", "argument 'x': expected a number, got ''"),
        ("on", "1", "argument 'on': expected a boolean (true or false), got '1'"),
        ("nothing", "nil", "argument 'nothing': expected null, got 'nil'"),
        ("tags", "a,b", """argument 'tags': expected a JSON array (like ["a", "b"]), got 'a,b'"""),
        ("tags", '{"a": 1}', """argument 'tags': expected a JSON array (like ["a", "b"]), got '{"a": 1}'"""),
        ("point", "[1]", """argument 'point': expected a JSON object (like {"key": "value"}), got '[1]'"""),
        ("maybe", "", "argument 'maybe': expected null or an integer, got ''"),
        ("level", "x", "argument 'level': expected an integer, got 'x'"),
    ],
)
def test_values_that_do_not_fit_name_the_argument(name, text, message):
    with pytest.raises(ArgumentValueError) as caught:
        convert(**{name: text})
    assert str(caught.value) == message
    assert caught.value.name == name
    assert caught.value.value == text


def test_a_long_value_is_cut_in_the_message():
    with pytest.raises(ArgumentValueError, match=r"got '1{50}x{7}\.\.\.'$"):
        convert(n="1" * 50 + "x" * 50)


@pytest.mark.parametrize(
    ("schema", "kinds"),
    [
        ({"type": "string", "enum": ["a"]}, {"string"}),
        ({"type": ["integer", "null", "bogus"]}, {"integer", "null"}),
        ({"type": ["bogus"]}, None),
        ({"const": {"a": 1}}, {"object"}),
        ({"enum": []}, None),
        ({"oneOf": [{"type": "number"}, {"type": "boolean"}]}, {"number", "boolean"}),
        ({"anyOf": [{"type": "number"}, {}]}, None),  # one alternative takes anything
        ({"allOf": [{"description": "x"}, {"type": "array"}]}, {"array"}),
        ({"properties": {}}, {"object"}),
        ({"items": {}}, {"array"}),
        ({"$ref": "#/$defs/missing"}, None),
        ({"$ref": "https://example.com/schema"}, None),
        ({"$ref": "#"}, None),  # itself, forever
        (True, None),
        ("string", None),
        ({}, None),
    ],
)
def test_argument_kinds(schema, kinds):
    got = argument_kinds(schema)
    assert (None if got is None else set(got)) == kinds


def test_refs_follow_json_pointers_with_escapes():
    root = {"$defs": {"a/b": {"type": "boolean"}, "list": [{"type": "integer"}]}}
    assert argument_kinds({"$ref": "#/$defs/a~1b"}, root) == {"boolean"}
    assert argument_kinds({"$ref": "#/$defs/list/0"}, root) == {"integer"}
    assert argument_kinds({"$ref": "#/$defs/list/7"}, root) is None


def test_an_enormous_recursive_schema_ends_quickly():
    # Each level doubles the work; the walk stops at its bound instead.
    root: dict = {"$defs": {"x": {"anyOf": [{"$ref": "#/$defs/x"}] * 100}}}
    assert argument_kinds({"$ref": "#/$defs/x"}, root) is None


def test_a_schema_without_properties_reads_everything_as_json():
    for schema in (None, [], {"type": "object"}, {"properties": []}):
        assert convert_arguments({"a": "1", "b": "x"}, schema) == {"a": 1, "b": "x"}


def test_describe_kinds():
    assert describe_kinds(frozenset({"string"})) == "a string"
    assert describe_kinds(frozenset({"integer", "null", "string"})) == "null, an integer or a string"
    assert describe_kinds(frozenset()) == "nothing"


# ------------------------------------------------------------------ properties

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    json_scalars | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


def _kind_of(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


@pytest.mark.property
@given(json_values)
def test_a_value_written_as_json_reads_back_under_its_own_type(value):
    kind = _kind_of(value)
    text = value if kind == "string" else json.dumps(value)
    assert convert_value("v", text, frozenset({kind})) == value


@pytest.mark.property
@given(st.text())
def test_a_string_argument_keeps_its_text(text):
    assert convert_arguments({"s": text}, {"properties": {"s": {"type": "string"}}}) == {"s": text}


@pytest.mark.property
@given(st.text() | json_values.map(json.dumps))
def test_without_a_schema_the_reading_is_the_json_one(text):
    try:
        expected = json.loads(text)
    except ValueError:
        expected = text
    if isinstance(expected, float) and not math.isfinite(expected):
        expected = text
    assert guess_value(text) == expected
    assert convert_arguments({"k": text}, {}) == {"k": expected}


schemas = st.recursive(
    st.none()
    | st.booleans()
    | st.sampled_from([*KINDS, "bogus"]).map(lambda kind: {"type": kind})
    | st.just({"$ref": "#"})
    | st.just({"$ref": "#/properties/v"})
    | json_values,
    lambda inner: st.dictionaries(
        st.sampled_from(["type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "items", "properties"]),
        inner | st.lists(inner, max_size=3),
        max_size=3,
    ),
    max_leaves=12,
)


@pytest.mark.property
@given(schemas, st.text() | json_values.map(json.dumps))
def test_any_schema_and_any_text_give_a_value_of_an_allowed_type_or_a_clear_error(schema, text):
    root = {"properties": {"v": schema}}
    kinds = argument_kinds(schema, root)
    error: ArgumentValueError | None = None
    try:
        converted = convert_arguments({"v": text}, root)["v"]
    except ArgumentValueError as exc:
        error = exc
    if error is not None:
        assert kinds is not None
        assert "string" not in kinds  # a string takes anything
        assert str(error).startswith("argument 'v': expected ")
    elif kinds is not None:
        kind = _kind_of(converted)
        assert kind in kinds or (kind == "integer" and "number" in kinds)

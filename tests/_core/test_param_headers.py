"""x-mcp-header (SEP-2243): which tool arguments become ``Mcp-Param-*`` headers, and how.

The rules of trio_mcp._core.param_headers, one at a time (the examples are
those of the official conformance harness), then as Hypothesis properties
over arbitrary schemas and arguments.
"""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import assume, given, strategies as st

from trio_mcp._core.param_headers import (
    MAX_SAFE_INTEGER,
    HeaderParam,
    InvalidAnnotation,
    header_params,
    param_headers,
    screen_tools,
)


def schema(**properties):
    return {"type": "object", "properties": properties}


def rule_of(input_schema):
    with pytest.raises(InvalidAnnotation) as info:
        header_params(input_schema)
    return info.value.rule


# ------------------------------------------------------------------ rules


def test_designated_properties_in_schema_order():
    found = header_params(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            float_val={"type": "number"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        )
    )
    assert found == (
        HeaderParam("Region", ("region",), "string"),
        HeaderParam("Priority", ("priority",), "integer"),
        HeaderParam("Verbose", ("verbose",), "boolean"),
    )
    assert found[0].name == "Mcp-Param-Region"


def test_a_nested_property_reached_through_properties_counts():
    found = header_params(
        schema(options={"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}})
    )
    assert found == (HeaderParam("Zone", ("options", "zone"), "string"),)


def test_a_nullable_primitive_counts():
    assert header_params(schema(r={"type": ["string", "null"], "x-mcp-header": "R"})) == (
        HeaderParam("R", ("r",), "string"),
    )


@pytest.mark.parametrize(
    ("prop", "rule"),
    [
        ({"type": "string", "x-mcp-header": ""}, "not-empty"),
        ({"type": "string", "x-mcp-header": 7}, "not-empty"),
        ({"type": "object", "x-mcp-header": "Data"}, "primitive-only"),
        ({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}, "primitive-only"),
        ({"type": "null", "x-mcp-header": "Nil"}, "primitive-only"),
        ({"type": "number", "x-mcp-header": "Score"}, "primitive-only"),
        ({"x-mcp-header": "Untyped"}, "primitive-only"),
        ({"$ref": "#/$defs/region", "x-mcp-header": "Ref"}, "primitive-only"),
        ({"type": ["string", "integer"], "x-mcp-header": "Either"}, "primitive-only"),
        ({"type": "string", "x-mcp-header": "My Region"}, "charset"),
        ({"type": "string", "x-mcp-header": "Region:Primary"}, "charset"),
        ({"type": "string", "x-mcp-header": "Région"}, "charset"),
        ({"type": "string", "x-mcp-header": "Region\t1"}, "charset"),
    ],
)
def test_an_invalid_annotation_names_its_rule(prop, rule):
    assert rule_of(schema(value=prop)) == rule


@pytest.mark.parametrize(("first", "second"), [("Region", "Region"), ("MyField", "myfield")])
def test_annotations_are_unique_whatever_their_case(first, second):
    assert (
        rule_of(
            schema(
                field1={"type": "string", "x-mcp-header": first},
                field2={"type": "string", "x-mcp-header": second},
            )
        )
        == "unique"
    )


@pytest.mark.parametrize(
    "misplaced",
    [
        {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
        {"anyOf": [{"type": "string", "x-mcp-header": "A"}, {"type": "integer"}]},
        {"oneOf": [{"type": "string", "x-mcp-header": "A"}]},
        {"allOf": [{"type": "string", "x-mcp-header": "A"}]},
        {"not": {"type": "string", "x-mcp-header": "A"}},
        {"if": {"type": "string", "x-mcp-header": "A"}},
        {"then": {"type": "string", "x-mcp-header": "A"}},
        {"else": {"type": "string", "x-mcp-header": "A"}},
        {"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "A"}},
        {"type": "object", "patternProperties": {"^a": {"type": "string", "x-mcp-header": "A"}}},
        # A property under a misplaced schema is misplaced too.
        {"anyOf": [{"type": "object", "properties": {"p": {"type": "string", "x-mcp-header": "A"}}}]},
    ],
)
def test_an_annotation_not_reached_through_properties_alone_is_misplaced(misplaced):
    assert rule_of(schema(value=misplaced)) == "placement"


def test_an_annotation_on_the_schema_itself_or_in_its_definitions_is_misplaced():
    assert rule_of({"type": "string", "x-mcp-header": "Root"}) == "placement"
    assert rule_of({"type": "object", "$defs": {"r": {"type": "string", "x-mcp-header": "R"}}}) == "placement"


def test_values_that_are_data_are_not_read_as_schemas():
    found = header_params(
        schema(
            value={"type": "object", "default": {"x-mcp-header": ""}, "enum": [{"x-mcp-header": ""}]},
            x={"const": {"properties": {"y": {"x-mcp-header": ""}}}},
        )
    )
    assert found == ()


@pytest.mark.parametrize(
    "not_a_schema", [None, [], "object", 3, {"properties": []}, {"properties": {"a": 1}}]
)
def test_a_schema_that_is_not_one_designates_nothing(not_a_schema):
    assert header_params(not_a_schema) == ()


def test_screening_a_listing_keeps_the_order_and_says_why():
    tools = [
        ("valid_tool", schema(region={"type": "string", "x-mcp-header": "Region"})),
        ("plain", schema(a={"type": "number"})),
        ("invalid_number_header", schema(score={"type": "number", "x-mcp-header": "Score"})),
        ("also_valid", schema(v={"type": "boolean", "x-mcp-header": "V"})),
    ]
    kept, params, dropped = screen_tools(tools, lambda tool: tool)
    assert [name for name, _ in kept] == ["valid_tool", "plain", "also_valid"]
    assert set(params) == {"valid_tool", "also_valid"}
    assert [(tool[0], exc.rule, exc.where) for tool, exc in dropped] == [
        ("invalid_number_header", "primitive-only", "score")
    ]
    assert "Score" in str(dropped[0][1])


# ------------------------------------------------------------------ values

CUSTOM = header_params(
    schema(
        region={"type": "string", "x-mcp-header": "Region"},
        priority={"type": "integer", "x-mcp-header": "Priority"},
        verbose={"type": "boolean", "x-mcp-header": "Verbose"},
        debug={"type": "boolean", "x-mcp-header": "Debug"},
        empty_val={"type": "string", "x-mcp-header": "EmptyVal"},
        method_val={"type": "string", "x-mcp-header": "Method"},
        non_ascii_val={"type": "string", "x-mcp-header": "NonAscii"},
        whitespace_val={"type": "string", "x-mcp-header": "Whitespace"},
        internal_space_val={"type": "string", "x-mcp-header": "InternalSpace"},
        crlf_val={"type": "string", "x-mcp-header": "CrLf"},
        tab_val={"type": "string", "x-mcp-header": "Tab"},
        query={"type": "string"},
    )
)


def b64(text):
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def test_values_as_the_harness_expects_them():
    headers = param_headers(
        CUSTOM,
        {
            "region": "us-west1",
            "priority": 42,
            "verbose": False,
            "debug": True,
            "empty_val": "",
            "method_val": "test-method",
            "non_ascii_val": "Hello, 世界",
            "whitespace_val": " padded ",
            "internal_space_val": "us west 1",
            "crlf_val": "line1\r\nline2",
            "tab_val": "\tindented",
            "query": "SELECT * FROM users",
        },
    )
    assert headers == [
        ("Mcp-Param-Region", "us-west1"),
        ("Mcp-Param-Priority", "42"),
        ("Mcp-Param-Verbose", "false"),
        ("Mcp-Param-Debug", "true"),
        ("Mcp-Param-EmptyVal", ""),
        ("Mcp-Param-Method", "test-method"),
        ("Mcp-Param-NonAscii", b64("Hello, 世界")),
        ("Mcp-Param-Whitespace", b64(" padded ")),
        ("Mcp-Param-InternalSpace", "us west 1"),
        ("Mcp-Param-CrLf", b64("line1\r\nline2")),
        ("Mcp-Param-Tab", b64("\tindented")),
    ]


def test_absent_and_null_arguments_send_no_header():
    assert param_headers(CUSTOM, {"region": "us-east1", "priority": 1, "verbose": None}) == [
        ("Mcp-Param-Region", "us-east1"),
        ("Mcp-Param-Priority", "1"),
    ]
    assert param_headers(CUSTOM, None) == []
    assert param_headers(CUSTOM, {}) == []


def test_a_value_of_the_encoded_form_is_encoded_again():
    assert param_headers(CUSTOM, {"region": "=?base64?QQ==?="}) == [
        ("Mcp-Param-Region", b64("=?base64?QQ==?="))
    ]


def test_a_nested_argument_is_found_and_a_missing_parent_sends_nothing():
    params = (HeaderParam("Zone", ("options", "zone"), "string"),)
    assert param_headers(params, {"options": {"zone": "z1"}}) == [("Mcp-Param-Zone", "z1")]
    assert param_headers(params, {"options": "z1"}) == []
    assert param_headers(params, {"zone": "z1"}) == []


def test_an_integral_float_is_sent_as_an_integer():
    assert param_headers(CUSTOM, {"priority": 3.0}) == [("Mcp-Param-Priority", "3")]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (MAX_SAFE_INTEGER + 1, "beyond"),
        (-MAX_SAFE_INTEGER - 1, "beyond"),
        (2.5, "not float"),
        ({"a": 1}, "not dict"),
        (["a"], "not list"),
    ],
)
def test_a_value_no_header_can_carry_is_the_callers_error(value, message):
    with pytest.raises(ValueError, match=message):
        param_headers(CUSTOM, {"priority": value})


def test_the_largest_safe_integers_are_sent():
    assert param_headers(CUSTOM, {"priority": -MAX_SAFE_INTEGER}) == [
        ("Mcp-Param-Priority", str(-MAX_SAFE_INTEGER))
    ]


# ------------------------------------------------------------------ properties

TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")

tokens = st.from_regex(TOKEN, fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
keywords = st.sampled_from(
    ["type", "properties", "items", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "$ref", "$defs",
     "x-mcp-header", "additionalProperties", "patternProperties", "default", "enum"]
)  # fmt: skip
json_values = st.recursive(
    json_scalars
    | st.sampled_from(
        ["string", "integer", "boolean", "number", "object", "array", "null", "Region", "région"]
    ),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(keywords | st.text(max_size=4), children, max_size=5)
    ),
    max_leaves=30,
)


@pytest.mark.property
@given(json_values)
def test_any_schema_gives_valid_params_or_names_a_rule(input_schema):
    try:
        found = header_params(input_schema)
    except InvalidAnnotation as exc:
        error = exc
        found = ()
    else:
        error = None
    if error is not None:
        assert error.rule in {"not-empty", "charset", "unique", "primitive-only", "placement"}
        assert str(error)
    names = [param.header.lower() for param in found]
    assert len(names) == len(set(names))
    for param in found:
        assert TOKEN.fullmatch(param.header)
        assert param.type in {"string", "integer", "boolean"}
        # The path leads, through `properties` alone, to the annotated property.
        node = input_schema
        for key in param.path:
            node = node["properties"][key]
        assert node["x-mcp-header"] == param.header


primitive_types = st.sampled_from(["string", "integer", "boolean"])


@st.composite
def valid_schemas(draw):
    """A schema of nested properties, some annotated with distinct tokens; and what it designates."""
    used = set()
    designated = []

    def properties(path, depth):
        result = {}
        for name in draw(st.lists(st.text(min_size=1, max_size=5), max_size=4, unique=True)):
            if depth < 2 and draw(st.booleans()):
                result[name] = {"type": "object", "properties": properties((*path, name), depth + 1)}
                continue
            prop = {"type": draw(primitive_types | st.just("number"))}
            if prop["type"] != "number" and draw(st.booleans()):
                token = draw(tokens.filter(lambda token: token.lower() not in used))
                used.add(token.lower())
                prop["x-mcp-header"] = token
                designated.append(HeaderParam(token, (*path, name), prop["type"]))
            result[name] = prop
        return result

    return {"type": "object", "properties": properties((), 0)}, designated


@pytest.mark.property
@given(valid_schemas())
def test_every_valid_annotation_is_found_in_order(case):
    input_schema, designated = case
    assert list(header_params(input_schema)) == designated


@pytest.mark.property
@given(valid_schemas(), st.sampled_from(["anyOf", "oneOf", "allOf", "items", "not", "then"]))
def test_wrapping_an_annotated_property_misplaces_it(case, keyword):
    input_schema, designated = case
    assume(designated)
    first = designated[0]
    parent = input_schema
    for key in first.path[:-1]:
        parent = parent["properties"][key]
    prop = parent["properties"][first.path[-1]]
    parent["properties"][first.path[-1]] = {keyword: [prop] if keyword.endswith("Of") else prop}
    assert rule_of(input_schema) == "placement"


@pytest.mark.property
@given(st.text())
def test_a_string_value_is_sent_plain_only_when_it_is_plain_and_always_decodes_back(value):
    ((name, header),) = param_headers((HeaderParam("V", ("v",), "string"),), {"v": value})
    assert name == "Mcp-Param-V"
    # Whatever the value, the header is a valid field value: no CR, LF or NUL can inject anything.
    assert FIELD_VALUE.fullmatch(header)
    if header.startswith("=?base64?") and header.endswith("?="):
        decoded = base64.b64decode(header[len("=?base64?") : -2], validate=True).decode(
            "utf-8", "surrogatepass"
        )
        assert decoded == value
    else:
        assert header == value
        assert value == value.strip(" \t")


@pytest.mark.property
@given(st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER) | st.booleans())
def test_integers_and_booleans_are_sent_as_json_spells_them(value):
    ((_, header),) = param_headers((HeaderParam("V", ("v",), "integer"),), {"v": value})
    assert header == ("true" if value is True else "false" if value is False else str(value))

"""Structured tool output checked against the tool's outputSchema (``validate_output``).

The pure part (`trio_mcp._core.outputs`) first: compiling, paths, the
per-listing book. Then the client over the in-memory fake server, in both
eras and every mode.
"""

from __future__ import annotations

import json
import sys

import pytest
import trio
from hypothesis import given, settings, strategies as st
from opening_support import process_client

import trio_mcp
import trio_mcp.types
from trio_mcp._core import outputs
from trio_mcp._core.outputs import MAX_SCHEMA_NODES, OutputSchemas, compile_schema, json_path
from trio_mcp.testing import FakeServer, open_fake_client

LIMIT = 20  # seconds: a bound for the tests that start real processes, not a speed claim

WEATHER = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number"},
        "conditions": {"type": "string"},
        "readings": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["temperature", "conditions"],
}
GOOD = {"temperature": 21.5, "conditions": "sunny", "readings": [1, 2]}
BAD = {"temperature": 21.5, "conditions": "sunny", "readings": [1, "two"]}


def weather_tool(name="weather", schema=WEATHER):
    return {"name": name, "inputSchema": {"type": "object"}, "outputSchema": schema}


def answer(structured, *, is_error=False):
    result = {"content": [{"type": "text", "text": json.dumps(structured)}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result


# ------------------------------------------------------------------ the pure part


def test_json_paths():
    assert json_path([]) == "$"
    assert json_path(["a", 1, "b"]) == "$.a[1].b"
    assert json_path(["odd key", 'q"uote']) == '$["odd key"]["q\\"uote"]'


def test_a_compiled_schema_names_the_first_failing_path():
    check = compile_schema(WEATHER)
    assert isinstance(check, outputs.Check)
    assert check.first_error(GOOD) is None
    path, message = check.first_error(BAD)
    assert path == "$.readings[1]"
    assert "integer" in message
    path, message = check.first_error({"temperature": 1})
    assert path == "$"
    assert "conditions" in message


def test_the_default_dialect_is_2020_12():
    # prefixItems is 2020-12 only (draft 7 ignores it).
    check = compile_schema({"type": "array", "prefixItems": [{"type": "string"}]})
    assert isinstance(check, outputs.Check)
    assert check.first_error([1]) is not None
    draft7 = compile_schema(
        {"$schema": "http://json-schema.org/draft-07/schema#", "prefixItems": [{"type": "string"}]}
    )
    assert isinstance(draft7, outputs.Check)
    assert draft7.first_error([1]) is None


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": 12}, "not a usable JSON Schema"),
        ("a string", "not a JSON Schema"),
        ({"$ref": "https://example.com/schema.json"}, "not a usable JSON Schema"),
        ({"$schema": "https://example.com/my-dialect", "type": "object"}, "not a usable JSON Schema"),
        ({"$ref": "#/$defs/missing"}, "not a usable JSON Schema"),
    ],
)
def test_an_unusable_schema_is_a_sentence_not_an_exception(schema, words):
    found = compile_schema(schema)
    assert isinstance(found, str)
    assert words in found


def test_a_very_deep_schema_is_refused_not_a_crash():
    schema = {"type": "object"}
    for _ in range(1_000):  # about as deep as a JSON decoder lets a schema arrive
        schema = {"type": "object", "properties": {"a": schema}}
    found = compile_schema(schema)
    assert isinstance(found, str)
    assert "not a usable JSON Schema" in found


def test_an_enormous_schema_is_refused_before_it_is_compiled():
    enormous = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(MAX_SCHEMA_NODES)},
    }
    found = compile_schema(enormous)
    assert isinstance(found, str)
    assert "too large" in found
    just_fits = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100)}}
    assert isinstance(compile_schema(just_fits), outputs.Check)


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            "$ref": "#/$defs/node",
        },
        # Loops that never move into the instance: a naive validator recurses forever.
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
        {
            "$defs": {
                "a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "string"}]},
                "b": {"not": {"$ref": "#/$defs/a"}},
            },
            "$ref": "#/$defs/a",
        },
        {"$dynamicAnchor": "n", "allOf": [{"$dynamicRef": "#n"}]},
    ],
)
def test_recursive_schemas_neither_crash_nor_hang(schema):
    deep = {}
    cursor = deep
    for _ in range(500):
        cursor["next"] = {}
        cursor = cursor["next"]
    found = compile_schema(schema)
    assert isinstance(found, outputs.Check | str)
    if isinstance(found, outputs.Check):
        found.first_error(deep)
        found.first_error(5)


def test_the_book_compiles_once_per_listing(monkeypatch):
    compiled = []
    real = outputs.compile_schema

    def counting(schema):
        compiled.append(schema)
        return real(schema)

    monkeypatch.setattr(outputs, "compile_schema", counting)
    book = OutputSchemas()
    tool = trio_mcp.types.Tool(name="weather", input_schema={"type": "object"}, output_schema=WEATHER)
    page = object()
    book.saw_page(page, [tool], first=True)
    for _ in range(3):
        assert book.judge("weather", GOOD, present=True) == ("ok", "", "")
    assert len(compiled) == 1
    book.saw_page(page, [tool], first=True)  # the cached page seen again: the same listing
    book.judge("weather", GOOD, present=True)
    assert len(compiled) == 1
    book.saw_page(object(), [tool], first=True)  # a new listing
    book.judge("weather", GOOD, present=True)
    assert len(compiled) == 2
    book.forget()
    assert book.judge("weather", GOOD, present=True) == ("ok", "", "")  # nothing known: nothing to say
    assert len(compiled) == 2


def test_the_book_verdicts():
    book = OutputSchemas()
    assert book.judge("weather", BAD, present=True)[0] == "ok"  # no listing yet
    book.saw_page(
        object(),
        [
            trio_mcp.types.Tool(name="weather", input_schema={"type": "object"}, output_schema=WEATHER),
            trio_mcp.types.Tool(name="plain", input_schema={"type": "object"}),
            trio_mcp.types.Tool(name="broken", input_schema={"type": "object"}, output_schema={"type": 12}),
        ],
        first=True,
    )
    assert book.judge("weather", BAD, present=True)[:2] == ("mismatch", "$.readings[1]")
    assert book.judge("weather", None, present=False)[0] == "missing"
    assert book.judge("plain", BAD, present=True)[0] == "ok"
    assert book.judge("broken", GOOD, present=True)[0] == "unusable"
    assert book.judge("elsewhere", GOOD, present=True)[0] == "unlisted"
    # A second page of the same listing adds to it.
    book.saw_page(
        object(), [trio_mcp.types.Tool(name="elsewhere", input_schema={}, output_schema=WEATHER)], first=False
    )
    assert book.judge("elsewhere", GOOD, present=True)[0] == "ok"
    assert book.judge("weather", GOOD, present=True)[0] == "ok"


def test_the_mode_option_is_checked():
    assert trio_mcp.ClientOptions().validate_output == "warn"
    with pytest.raises(ValueError, match="validate_output"):
        trio_mcp.ClientOptions(validate_output="loud")


# ------------------------------------------------------------------ the client


def fake(era, *tools):
    return FakeServer(era=era, tools=list(tools) or [weather_tool()])


ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])


@ERAS
async def test_warn_reports_a_mismatch_and_returns_the_result(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(BAD))
    logged = []
    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_log=logged.append)) as client:
        await client.list_tools()
        result = await client.call_tool("weather")
        assert result.structured_content == BAD
    mismatches = [line for line in logged if "does not match its outputSchema" in line]
    assert len(mismatches) == 1
    assert "'weather'" in mismatches[0]
    assert "$.readings[1]" in mismatches[0]


@ERAS
async def test_strict_raises_naming_the_tool_and_the_path(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(BAD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        with pytest.raises(trio_mcp.OutputValidationError) as caught:
            await client.call_tool("weather")
    error = caught.value
    assert isinstance(error, trio_mcp.MCPError)
    assert error.tool == "weather"
    assert error.path == "$.readings[1]"
    assert "integer" in error.reason
    assert error.result.structured_content == BAD
    assert "weather" in str(error)
    assert "$.readings[1]" in str(error)


@ERAS
async def test_a_matching_result_passes_in_every_mode(era, autojump_clock):
    for mode in ("warn", "strict", "off"):
        server = fake(era)
        server.on_tool("weather", lambda request: answer(GOOD))
        logged = []
        async with open_fake_client(
            server, options=trio_mcp.ClientOptions(validate_output=mode, on_log=logged.append)
        ) as client:
            await client.list_tools()
            assert (await client.call_tool("weather")).structured_content == GOOD
        assert logged == []


@ERAS
async def test_off_checks_nothing(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(BAD))
    logged = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="off", on_log=logged.append)
    ) as client:
        await client.list_tools()
        assert (await client.call_tool("weather")).structured_content == BAD
    assert logged == []


@ERAS
async def test_error_results_are_never_checked(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer({"error": "no such city"}, is_error=True))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        result = await client.call_tool("weather")
    assert result.is_error


@ERAS
async def test_a_missing_structured_content_is_a_failure(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(None))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        with pytest.raises(trio_mcp.OutputValidationError, match="no structuredContent") as caught:
            await client.call_tool("weather")
    assert caught.value.path == "$"


@ERAS
async def test_strict_lists_the_tools_once_when_none_were_listed(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(BAD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        with pytest.raises(trio_mcp.OutputValidationError):
            await client.call_tool("weather")
        with pytest.raises(trio_mcp.OutputValidationError):
            await client.call_tool("weather")
    listings = [r for r in server.requests if r.method == "tools/list"]
    assert len(listings) == 1


async def test_concurrent_strict_calls_share_one_listing(autojump_clock):
    server = fake("legacy")
    server.on_tool("weather", lambda request: answer(GOOD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(client.call_tool, "weather")
    assert len([r for r in server.requests if r.method == "tools/list"]) == 1


@ERAS
async def test_warn_never_lists_by_itself(era, autojump_clock):
    server = fake(era)
    server.on_tool("weather", lambda request: answer(BAD))
    logged = []
    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_log=logged.append)) as client:
        assert (await client.call_tool("weather")).structured_content == BAD
    assert [r.method for r in server.requests if r.method != "server/discover"].count("tools/list") == 0
    assert logged == []


async def test_a_tool_missing_from_the_listing_is_reported_once(autojump_clock):
    server = fake("legacy")
    server.on_tool("secret", lambda request: answer(BAD))
    logged = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="strict", on_log=logged.append)
    ) as client:
        await client.list_tools()
        for _ in range(3):
            assert (await client.call_tool("secret")).structured_content == BAD
    assert len([line for line in logged if "not in its tool listing" in line]) == 1
    assert len([r for r in server.requests if r.method == "tools/list"]) == 1


@pytest.mark.parametrize(
    "schema",
    [
        {"type": 12},
        {"$ref": "https://example.com/weather.json"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(MAX_SCHEMA_NODES)}},
    ],
    ids=["invalid", "remote-ref", "ref-loop", "enormous"],
)
async def test_an_unusable_schema_is_reported_once_and_never_fails_a_call(schema, autojump_clock):
    server = fake("legacy", weather_tool(schema=schema))
    server.on_tool("weather", lambda request: answer(GOOD))
    logged = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="strict", on_log=logged.append)
    ) as client:
        await client.list_tools()
        for _ in range(3):
            assert (await client.call_tool("weather")).structured_content == GOOD
    unusable = [line for line in logged if "cannot be used" in line]
    # A schema that compiles (the $ref loop accepts anything) is not reported.
    assert len(unusable) == (0 if "$defs" in schema else 1)


async def test_list_changed_forgets_the_schemas(autojump_clock):
    server = fake("legacy")
    server.on_tool("weather", lambda request: answer(GOOD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        await client.call_tool("weather")
        # The tool now promises something else, and says so.
        server.tools = [weather_tool(schema={"type": "object", "required": ["city"]})]
        await server.notify("notifications/tools/list_changed")
        await trio.sleep(0.1)
        with pytest.raises(trio_mcp.OutputValidationError, match="city"):
            await client.call_tool("weather")
    assert len([r for r in server.requests if r.method == "tools/list"]) == 2


async def test_a_new_listing_replaces_the_schemas(autojump_clock):
    server = fake("legacy")
    server.on_tool("weather", lambda request: answer(GOOD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        await client.call_tool("weather")
        server.tools = [weather_tool(schema={"type": "object", "required": ["city"]})]
        await client.list_tools()
        with pytest.raises(trio_mcp.OutputValidationError, match="city"):
            await client.call_tool("weather")


async def test_modern_non_object_structured_content(autojump_clock):
    server = fake("modern", weather_tool(schema={"type": "array", "items": {"type": "string"}}))
    server.on_tool("weather", lambda request: answer(["a", 3]))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        await client.list_tools()
        with pytest.raises(trio_mcp.OutputValidationError) as caught:
            await client.call_tool("weather")
    assert caught.value.path == "$[1]"


async def test_results_of_an_input_required_call_are_checked(autojump_clock):
    server = fake("modern")

    async def tool(request):
        if not request.input_responses:
            await request.input_required({"ask": {"method": "roots/list"}})
            return None
        return answer(BAD)

    server.on_tool("weather", tool)
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="strict", on_roots=list)
    ) as client:
        await client.list_tools()
        with pytest.raises(trio_mcp.OutputValidationError):
            await client.call_tool("weather")


async def test_revisions_before_structured_output_are_not_checked(autojump_clock):
    server = FakeServer(era="legacy", tools=[weather_tool()], protocol_version="2025-03-26")
    server.on_tool("weather", lambda request: answer(BAD))
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="strict", protocol="2025-03-26")
    ) as client:
        await client.call_tool("weather")
    assert [r for r in server.requests if r.method == "tools/list"] == []


async def test_without_the_validator_warn_says_so_once_and_strict_refuses(monkeypatch, autojump_clock):
    monkeypatch.setattr(outputs, "_backend", False)
    server = fake("legacy", weather_tool(), {"name": "plain", "inputSchema": {"type": "object"}})
    server.on_tool("weather", lambda request: answer(BAD))
    server.on_tool("plain", lambda request: answer(None))
    logged = []
    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_log=logged.append)) as client:
        await client.call_tool("weather")  # nothing listed: nothing to check, nothing to say
        await client.list_tools()
        await client.call_tool("plain")  # no outputSchema: nothing to say either
        assert logged == []
        for _ in range(3):
            await client.call_tool("weather")
            await client.list_tools()
    assert len([line for line in logged if "validation extra" in line]) == 1
    server = fake("legacy")
    server.on_tool("weather", lambda request: answer(GOOD))
    async with open_fake_client(server, options=trio_mcp.ClientOptions(validate_output="strict")) as client:
        with pytest.raises(trio_mcp.OutputValidationError, match=r"trio-mcp\[validation\]"):
            await client.call_tool("weather")


# ------------------------------------------------------------------ real processes: the demo server

DEMO = [sys.executable, "-m", "trio_mcp.demo"]
PROTOCOLS = pytest.mark.parametrize("protocol", ["auto", "2025-11-25"], ids=["modern", "legacy"])


def open_demo(*flags, **options):
    return process_client(DEMO[0], [*DEMO[1:], *flags], **options)


@PROTOCOLS
async def test_demo_honest_output_passes_strict(protocol):
    logged = []
    with trio.fail_after(LIMIT):
        async with open_demo(protocol=protocol, validate_output="strict", on_log=logged.append) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"sum": 5}
    assert logged == []


@PROTOCOLS
async def test_demo_wrong_output_in_each_mode(protocol):
    logged = []
    with trio.fail_after(LIMIT):
        async with open_demo("--wrong-output", protocol=protocol, on_log=logged.append) as client:
            await client.list_tools()
            warned = await client.call_tool("add", {"a": 2, "b": 3})
        async with open_demo("--wrong-output", protocol=protocol, validate_output="strict") as client:
            with pytest.raises(trio_mcp.OutputValidationError) as caught:
                await client.call_tool("add", {"a": 2, "b": 3})
            # The connection carries on.
            assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
        async with open_demo(
            "--wrong-output", protocol=protocol, validate_output="off", on_log=logged.append
        ) as client:
            await client.list_tools()
            unchecked = await client.call_tool("add", {"a": 2, "b": 3})
    assert warned.structured_content == unchecked.structured_content == {"sum": "5"}
    (report,) = [line for line in logged if "outputSchema" in line]
    assert "'add'" in report
    assert "$.sum" in report
    assert caught.value.tool == "add"
    assert caught.value.path == "$.sum"
    assert "number" in caught.value.reason


async def test_a_failed_listing_is_reported_once_and_not_repeated(autojump_clock):
    server = fake("legacy")
    server.on_tool("weather", lambda request: answer(BAD))

    def refuse(request):
        raise trio_mcp.RpcError(-32603, "the listing is broken")

    server.on_request("tools/list", refuse)
    logged = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(validate_output="strict", on_log=logged.append)
    ) as client:
        for _ in range(3):
            assert (await client.call_tool("weather")).structured_content == BAD
    assert len([r for r in server.requests if r.method == "tools/list"]) == 1
    (report,) = [line for line in logged if "cannot list the tools" in line]
    assert "the listing is broken" in report


async def test_reports_are_once_per_listing(autojump_clock):
    server = fake("legacy", weather_tool(schema={"type": 12}))
    server.on_tool("weather", lambda request: answer(GOOD))
    logged = []
    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_log=logged.append)) as client:
        for _ in range(2):
            await client.list_tools()
            await client.call_tool("weather")
            await client.call_tool("weather")
    assert len([line for line in logged if "cannot be used" in line]) == 2


# ------------------------------------------------------------------ properties

#: Keys that make up schemas: keywords (some of them refer elsewhere) and plain names.
schema_keys = st.sampled_from(
    [
        "type", "properties", "items", "required", "$ref", "$defs", "allOf", "anyOf", "oneOf", "not",
        "enum", "const", "minimum", "pattern", "additionalProperties", "$schema", "$id", "$dynamicRef",
        "$dynamicAnchor", "prefixItems", "if", "then", "else", "a", "b",
    ]
)  # fmt: skip
schema_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        ["object", "array", "string", "integer", "#", "#/$defs/a", "#/$defs/b", "^a+$", "(", "x"]
    )
)
schema_values = st.recursive(
    schema_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(schema_keys, children, max_size=5),
    max_leaves=30,
)


@pytest.mark.property
@settings(deadline=None)
@given(schema=schema_values, instance=schema_values)
def test_any_schema_and_value_give_a_verdict_never_an_exception(schema, instance):
    found = compile_schema(schema)
    assert isinstance(found, outputs.Check | str)
    if isinstance(found, outputs.Check):
        verdict = found.first_error(instance)
        assert verdict is None or (verdict[0].startswith("$") and isinstance(verdict[1], str))

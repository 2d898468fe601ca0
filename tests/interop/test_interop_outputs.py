"""Structured output checked against real servers' output schemas, and sampling with tools.

``everything`` (TypeScript SDK, 2025-11-25) and our ``sdk`` server (Python
SDK, both eras) declare output schemas and return structured content that
matches them: the strict mode accepts it. ``sdk`` also asks the client's
model to sample with a tool, ``calc``, whose use it requires (the SDK itself
refuses unless the client declared ``sampling.tools``).
"""

from __future__ import annotations

import json

import pytest
import trio

import trio_mcp
import trio_mcp.types

LEGACY = "2025-11-25"
TIMEOUT = 30  # generous: node and Python servers can be slow to start on a busy machine

SDK_ERAS = pytest.mark.parametrize("protocol", ["auto", LEGACY], ids=["modern", "legacy"])


async def test_everything_structured_content_passes_strict(everything_server, wire):
    logged = []
    with trio.fail_after(TIMEOUT):
        async with everything_server.client(validate_output="strict", on_log=logged.append) as client:
            # Nothing listed yet: strict lists the tools once, on the first call.
            result = await client.call_tool("get-structured-content", {"location": "New York"})
            again = await client.call_tool("get-structured-content", {"location": "Chicago"})
            # An error result (the input is refused) has no structured content: never checked.
            refused = await client.call_tool("get-structured-content", {"location": "Paris"})
            listings = [m for m in wire.written(client) if m.get("method") == "tools/list"]
            tools = {tool.name: tool for tool in await client.list_tools()}
            wire.check(client.protocol_version, client)
    assert len(listings) == 1
    assert tools["get-structured-content"].output_schema["type"] == "object"
    assert set(result.structured_content) >= {"temperature", "conditions", "humidity"}
    assert set(again.structured_content) >= {"temperature", "conditions", "humidity"}
    assert refused.is_error
    assert refused.structured_content is None
    assert not [line for line in logged if "outputSchema" in line]


@SDK_ERAS
async def test_sdk_structured_output_passes_strict(sdk_server, wire, protocol):
    logged = []
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(
            protocol=protocol, validate_output="strict", on_log=logged.append
        ) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            forecast = await client.call_tool("forecast", {"city": "Paris"})
            added = await client.call_tool("add", {"a": 2, "b": 3})
            again = await client.call_tool("forecast", {"city": "Lyon"})
            wire.check(client.protocol_version, client)
    assert tools["forecast"].output_schema["required"] == ["city", "temperature", "conditions", "readings"]
    assert forecast.structured_content == {
        "city": "Paris",
        "temperature": 21.5,
        "conditions": "sunny",
        "readings": [18, 21, 24],
    }
    assert again.structured_content["city"] == "Lyon"
    assert added.structured_content == {"result": 5}
    assert logged == []
    # Known from the listing: the calls list nothing more.
    assert len([m for m in wire.written(client) if m.get("method") == "tools/list"]) == 1


@SDK_ERAS
async def test_sdk_sampling_with_tools(sdk_server, wire, protocol):
    asked = []

    async def on_sampling(params):
        asked.append(params)
        (tool,) = params.tools
        return trio_mcp.types.CreateMessageResult(
            role="assistant",
            content=[trio_mcp.types.ToolUseContent(id="call-1", name=tool.name, input={"a": 2, "b": 2})],
            model="test-model",
            stop_reason="toolUse",
        )

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(
            protocol=protocol, on_sampling=on_sampling, sampling_tools=True
        ) as client:
            result = await client.call_tool("pick_tool")
            wire.check(client.protocol_version, client)
    assert not result.is_error, result.text
    assert json.loads(result.text) == {
        "model": "test-model",
        "stop_reason": "toolUse",
        "uses": [{"id": "call-1", "name": "calc", "input": {"a": 2, "b": 2}}],
    }
    (params,) = asked
    assert params.tool_choice == trio_mcp.types.ToolChoice(mode="required")
    assert params.tools[0].input_schema["properties"]["a"] == {"type": "number"}


@SDK_ERAS
async def test_sdk_refuses_sampling_with_tools_to_a_client_that_did_not_declare_them(
    sdk_server, wire, protocol
):
    asked = []

    async def on_sampling(params):
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(protocol=protocol, on_sampling=on_sampling) as client:
            if client.era == "modern":
                with pytest.raises((trio_mcp.RpcError, trio_mcp.InputRequestFailed)):
                    await client.call_tool("pick_tool")
            else:
                try:
                    result = await client.call_tool("pick_tool")
                except trio_mcp.RpcError:
                    pass
                else:
                    assert result.is_error
            wire.check(client.protocol_version, client)
    assert asked == []

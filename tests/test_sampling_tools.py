"""Sampling with tools (``sampling_tools=True``), against real processes of ``tests/servers/mcp_server.py``.

The hook gets the offered tools and the tool choice as typed models, and may
answer with `ToolUseContent`; the client declares ``sampling.tools`` only
where the revision has it, refuses tool requests without the option, and
checks the hook's answer before it is sent. What the client sends is checked
against the official schema of the negotiated revision.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``.
"""

from __future__ import annotations

import pytest
import trio
from client_support import CLIENT_CAPABILITIES, LIMIT, open_client, requests, responses, tool_calls, wire
from schema_support import NO_SCHEMAS, SCHEMA_DIR, envelope_definition, validator

import trio_mcp
from trio_mcp import InputRequestFailed
from trio_mcp.types import (
    CreateMessageParams,
    CreateMessageResult,
    TextContent,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)

pytestmark = pytest.mark.skipif(not SCHEMA_DIR.is_dir(), reason=NO_SCHEMAS)

ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])


def check(message, revision, definition):
    validator(revision, envelope_definition(revision, definition)).validate(message)


class Model:
    """A sampling hook that asks for the offered tool, or answers in text once it has a result."""

    def __init__(self, answer=None):
        self.asked: list[CreateMessageParams] = []
        self.answer = answer

    async def __call__(self, params):
        self.asked.append(params)
        if self.answer is not None:
            return self.answer
        last = params.messages[-1].content
        if isinstance(last, list) and isinstance(last[0], ToolResultContent):
            return CreateMessageResult(
                role="assistant", content=TextContent(text="4"), model="m", stop_reason="endTurn"
            )
        return CreateMessageResult(
            role="assistant",
            content=[ToolUseContent(id="call-1", name="calc", input={"a": 2, "b": 2})],
            model="m",
            stop_reason="toolUse",
        )


TOOL_USE_WIRE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "call-1", "name": "calc", "input": {"a": 2, "b": 2}}],
    "model": "m",
    "stopReason": "toolUse",
}


@ERAS
async def test_the_hook_gets_typed_tools_and_answers_with_tool_use(era):
    model = Model()
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, on_sampling=model, sampling_tools=True) as client:
            result = await client.call_tool("sample", {"tools": True, "choice": "required"})
            sent = await wire(client)
    assert not result.is_error, result
    assert result.structured_content["answer"] == TOOL_USE_WIRE
    (params,) = model.asked
    assert isinstance(params, CreateMessageParams)
    (tool,) = params.tools
    assert isinstance(tool, Tool)
    assert tool.name == "calc"
    assert tool.input_schema["properties"]["a"] == {"type": "number"}
    assert params.tool_choice == ToolChoice(mode="required")
    if era == "modern":
        first, second = tool_calls(sent, "sample")
        assert first["params"]["_meta"][CLIENT_CAPABILITIES]["sampling"] == {"tools": {}}
        assert second["params"]["inputResponses"] == {"llm": TOOL_USE_WIRE}
        for message in (first, second):
            check(message, "2026-07-28", "CallToolRequest")
    else:
        (init,) = requests(sent, "initialize")
        assert init["params"]["capabilities"]["sampling"] == {"tools": {}}
        check(init, "2025-11-25", "InitializeRequest")
        (answer,) = [r for r in responses(sent) if r.get("result", {}).get("model") == "m"]
        assert answer["result"] == TOOL_USE_WIRE
        check(answer, "2025-11-25", "JSONRPCResultResponse")
        check(answer["result"], "2025-11-25", "CreateMessageResult")


@ERAS
async def test_a_conversation_with_tool_results_reaches_the_hook_typed(era):
    model = Model()
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, on_sampling=model, sampling_tools=True) as client:
            result = await client.call_tool("sample", {"tools": True, "turn": True})
    assert result.structured_content["answer"]["content"] == {"type": "text", "text": "4"}
    (params,) = model.asked
    use = params.messages[1].content[0]
    assert use == ToolUseContent(id="u1", name="calc", input={"a": 2, "b": 2})
    (done,) = params.messages[2].content
    assert isinstance(done, ToolResultContent)
    assert done.tool_use_id == "u1"
    assert done.structured_content == {"sum": 4}
    assert done.content == [TextContent(text="4")]


@ERAS
async def test_without_the_option_tool_requests_are_refused_and_nothing_is_declared(era):
    model = Model()
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, on_sampling=model) as client:
            if era == "modern":
                with pytest.raises(InputRequestFailed, match=r"sampling\.tools"):
                    await client.call_tool("sample", {"tools": True})
            else:
                assert (await client.call_tool("sample", {"tools": True})).is_error
            sent = await wire(client)
    assert model.asked == []
    if era == "modern":
        (call,) = tool_calls(sent, "sample")
        assert call["params"]["_meta"][CLIENT_CAPABILITIES]["sampling"] == {}
    else:
        (init,) = requests(sent, "initialize")
        assert init["params"]["capabilities"]["sampling"] == {}


async def test_revisions_before_2025_11_25_have_no_sampling_tools():
    model = Model()
    with trio.fail_after(LIMIT):
        async with open_client(
            "--era", "legacy", protocol="2025-06-18", on_sampling=model, sampling_tools=True
        ) as client:
            assert client.protocol_version == "2025-06-18"
            result = await client.call_tool("sample", {"tools": True})
            plain = await client.call_tool("sample")
            sent = await wire(client)
    (init,) = requests(sent, "initialize")
    assert init["params"]["capabilities"]["sampling"] == {}
    check(init, "2025-06-18", "InitializeRequest")
    assert result.is_error
    (error,) = result.structured_content["error"].values()
    assert error["code"] == -32602
    # A plain request still reaches the hook, and an answer with tool use
    # (which this revision cannot carry) is refused before it is sent.
    assert len(model.asked) == 1
    assert plain.is_error
    (error,) = plain.structured_content["error"].values()
    assert "2025-06-18" in error["message"]


@pytest.mark.parametrize(
    ("arguments", "answer", "words"),
    [
        ({"tools": True}, None, None),
        ({}, None, "offered none"),
        ({"tools": True, "choice": "none"}, None, '"none"'),
        (
            {"tools": True},
            CreateMessageResult(
                role="assistant", content=[ToolUseContent(id="x", name="rm", input={})], model="m"
            ),
            "'rm'",
        ),
        (
            {"tools": True},
            CreateMessageResult(
                role="assistant",
                content=[
                    ToolResultContent(tool_use_id="x", content=[]),
                    TextContent(text="and more"),
                ],
                model="m",
            ),
            "tool results only",
        ),
    ],
    ids=["fine", "no-tools-offered", "choice-none", "unknown-tool", "mixed-results"],
)
@ERAS
async def test_the_hooks_tool_use_is_checked_before_it_is_sent(era, arguments, answer, words):
    model = Model(answer)
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, on_sampling=model, sampling_tools=True) as client:
            if era == "modern" and words is not None:
                with pytest.raises(InputRequestFailed, match="on_sampling") as caught:
                    await client.call_tool("sample", arguments)
                assert words in str(caught.value.__cause__)
            else:
                result = await client.call_tool("sample", arguments)
                if words is None:
                    assert not result.is_error
                else:
                    assert result.is_error
                    (error,) = result.structured_content["error"].values()
                    assert words in error["message"]
            # The connection carries on.
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"


def test_the_option_needs_the_hook():
    with pytest.raises(ValueError, match="on_sampling"):
        trio_mcp.ClientOptions(sampling_tools=True)
    with pytest.raises(TypeError):
        trio_mcp.ClientOptions(sampling_tools="yes", on_sampling=print)

"""The HTTP client against the real peers in their HTTP modes.

* server-everything (TypeScript SDK 1.32.2) in ``streamableHttp`` mode: the
  initialize era with sessions, priming events and a GET stream; the server's
  requests arrive on POST streams and are answered by POST. In ``sse`` mode:
  the HTTP+SSE transport of 2024-11-05, reached by the fallback.
* Our server on the official Python SDK, under uvicorn: 2026-07-28
  (stateless, input by ``input_required`` rounds) and, asked for, the
  initialize era on the same endpoint.

Each test bounds its exchanges with `trio.fail_after`; the fixtures stop the
servers without waiting on open streams.
"""

from __future__ import annotations

import trio
from test_interop_legacy import wait_for_tool

import trio_mcp

TIMEOUT = 30
LEGACY = "2025-11-25"


def connect(server, **options):
    options.setdefault("trust_env", False)
    return trio_mcp.open_http_client(server.url, **options)


# ------------------------------------------------------------------ everything


async def test_everything_http_handshake_and_calls(everything_http, wire):
    with trio.fail_after(TIMEOUT):
        async with connect(everything_http) as client:
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            assert client.server_info.name == "mcp-servers/everything"
            await client.ping()
            echo = await client.call_tool("echo", {"message": "over http"})
            tools = {tool.name for tool in await client.list_tools()}
            wire.check(client.protocol_version, client)
    assert "over http" in echo.text
    assert {"echo", "get-sum"} <= tools
    methods = [m.get("method") for m in wire.written(client)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_everything_http_sampling_is_answered_by_post(everything_http, wire):
    asked = []

    async def on_sampling(params):
        asked.append(params)
        return trio_mcp.CreateMessageResult(
            role="assistant", content=trio_mcp.TextContent(text="Hello there."), model="test-model"
        )

    with trio.fail_after(TIMEOUT):
        async with connect(everything_http, on_sampling=on_sampling) as client:
            await wait_for_tool(client, "trigger-sampling-request")
            result = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
            wire.check(client.protocol_version, client)
    (params,) = asked
    assert params.max_tokens == 20
    assert "Hello there." in result.text


async def test_everything_http_progress(everything_http):
    seen = []
    with trio.fail_after(TIMEOUT):
        async with connect(everything_http) as client:
            result = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                on_progress=lambda *update: seen.append(update),
            )
    assert len(seen) == 3
    assert "completed" in result.text.lower()


async def test_everything_sse_transport_of_2024_11_05(everything_sse):
    with trio.fail_after(TIMEOUT):
        async with connect(everything_sse) as client:
            assert client.era == "legacy"
            echo = await client.call_tool("echo", {"message": "old transport"})
    assert "old transport" in echo.text


# ------------------------------------------------------------------ the official Python SDK


async def test_sdk_http_modern(sdk_http, wire):
    progress = []
    with trio.fail_after(TIMEOUT):
        async with connect(
            sdk_http, on_elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}}
        ) as client:
            assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
            echo = await client.call_tool("echo", {"text": "héllo ✓"})
            slow = await client.call_tool(
                "slow", {"steps": 3, "delay": 0.01}, on_progress=lambda *update: progress.append(update)
            )
            greeted = await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert echo.text == "héllo ✓"
    assert slow.text == "slept 3 steps"
    assert len(progress) == 3
    assert greeted.text == "Hello, Ada!"


async def test_sdk_http_legacy_session(sdk_http, wire):
    asked = []

    def on_elicitation(params):
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    with trio.fail_after(TIMEOUT):
        async with connect(sdk_http, protocol=LEGACY, on_elicitation=on_elicitation) as client:
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            echo = await client.call_tool("echo", {"text": "session"})
            greeted = await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert echo.text == "session"
    assert greeted.text == "Hello, Ada!"
    assert len(asked) == 1


async def test_sdk_http_listen_stream_closed_by_the_client(sdk_http):
    """A listen stream is still open when the client leaves: closing is prompt, and the
    fixture's teardown does not wait on uvicorn's open stream."""
    with trio.fail_after(TIMEOUT):
        async with connect(sdk_http) as client:
            async with client.listen(tools=True) as subscription:
                await client.call_tool("touch")
                notes = []
                async for note in subscription:
                    notes.append(note)
                    break
    assert notes[0]["method"] == "notifications/tools/list_changed"


async def test_sdk_http_unknown_tool_is_a_tool_error(sdk_http):
    with trio.fail_after(TIMEOUT):
        async with connect(sdk_http) as client:
            result = await client.call_tool("no-such-tool", {})
    assert result.is_error is True

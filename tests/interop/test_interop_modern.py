"""The 2026-07-28 era against real servers on the official Python SDK.

``sdk`` is our own server (``servers/sdk_server.py``) on ``mcp`` 2.3.0; it
covers every feature. ``time`` is ``mcp-server-time``, a third-party server
on the same SDK's low-level API. Every line the client writes is checked
against the 2026-07-28 schema (the ``wire`` fixture).
"""

from __future__ import annotations

import json

import pytest
import trio

import trio_mcp
import trio_mcp.types

MODERN = "2026-07-28"
TIMEOUT = 30  # generous: a cold start of a Python server takes about a second
ENVELOPE_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def tool_calls(wire, client):
    return [m for m in wire.written(client) if m.get("method") == "tools/call"]


async def never(*args):
    raise AssertionError(f"a hook was called: {args!r}")


async def test_discover(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN
            assert client.server_info.name == "trio-mcp-test-server"
            assert client.server_info.version == "1.0.0"
            assert client.instructions == "A test server for the trio_mcp interop tests."
            capabilities = client.server_capabilities
            assert capabilities.tools is not None
            assert capabilities.prompts is not None
            assert capabilities.completions is not None
            assert capabilities.resources["subscribe"] is True
            found = await client.discover()
            assert found.supported_versions == [MODERN]
            assert found.server_info.name == "trio-mcp-test-server"
            assert found.cache_scope == "private"
            wire.check(client.protocol_version, client)
    probe = wire.written(client)[0]
    assert probe["method"] == "server/discover"
    assert probe["params"]["_meta"][ENVELOPE_CAPABILITIES] == {}


async def test_tools(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            echo = await client.call_tool("echo", {"text": "héllo ✓"})
            added = await client.call_tool("add", {"a": 2, "b": 40})
            failed = await client.call_tool("fail", {"message": "no luck"})
            unknown = await client.call_tool("no_such_tool")  # MCPServer: a tool error
            wire.check(client.protocol_version, client)
    assert {"echo", "add", "fail", "slow", "log_demo", "touch", "greet", "summarize"} <= set(tools)
    assert {"list_roots", "two_questions", "counter"} <= set(tools)
    assert set(tools["add"].input_schema["properties"]) == {"a", "b"}
    assert tools["add"].description == "Add two integers."
    assert tools["add"].display_name == "add"
    assert echo.text == "héllo ✓"
    assert echo.is_error is False
    assert isinstance(echo.content[0], trio_mcp.types.TextContent)
    assert added.structured_content == {"result": 42}
    assert added.text == "42"
    assert failed.is_error is True
    assert "no luck" in failed.text
    assert unknown.is_error is True
    assert "Unknown tool: no_such_tool" in unknown.text


async def test_prompts(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
            review = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
            wire.check(client.protocol_version, client)
    assert set(prompts) == {"review", "unlock"}
    arguments = [(argument.name, argument.required) for argument in prompts["review"].arguments]
    assert arguments == [("code", True), ("language", False)]
    assert review.description == "Ask for a code review."
    (message,) = review.messages
    assert message.role == "user"
    assert isinstance(message.content, trio_mcp.types.TextContent)
    assert message.content.text == "Please review this rust code:\nx = 1"


async def test_resources_and_templates(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            resources = await client.list_resources()
            readme = await client.read_resource("test://static/readme")
            templates = {template.name: template for template in await client.list_resource_templates()}
            item = await client.read_resource("test://items/42")
            with pytest.raises(trio_mcp.RpcError) as missing:
                await client.read_resource("test://nothing/here")
            wire.check(client.protocol_version, client)
    (resource,) = resources
    assert (resource.uri, resource.name, resource.mime_type) == (
        "test://static/readme",
        "readme",
        "text/plain",
    )
    (content,) = readme.contents
    assert isinstance(content, trio_mcp.types.TextResourceContents)
    assert (content.uri, content.text, content.mime_type) == (
        "test://static/readme",
        "This is the readme.",
        "text/plain",
    )
    assert readme.cache_scope == "private"
    assert templates["item"].uri_template == "test://items/{item_id}"
    assert templates["vault"].uri_template == "test://vault/{key}"
    assert item.contents[0].text == "item number 42"
    assert missing.value.code == -32602


async def test_completion(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            by_wire_ref = await client.complete({"type": "ref/prompt", "name": "review"}, ("language", "p"))
            (review,) = [p for p in await client.list_prompts() if p.name == "review"]
            by_prompt = await client.complete(review, {"name": "language", "value": "ru"})
            (item,) = [t for t in await client.list_resource_templates() if t.name == "item"]
            by_template = await client.complete(item, ("item_id", "1"), context={"other": "x"})
            wire.check(client.protocol_version, client)
    assert by_wire_ref.values == ["python", "perl", "php"]
    assert by_wire_ref.total == 3
    assert by_wire_ref.has_more is False
    assert by_prompt.values == ["rust", "ruby"]
    assert by_template.values == ["1", "10"]
    refs = [m["params"]["ref"] for m in wire.written(client) if m.get("method") == "completion/complete"]
    assert refs[1:] == [
        {"type": "ref/prompt", "name": "review"},
        {"type": "ref/resource", "uri": "test://items/{item_id}"},
    ]


# ------------------------------------------------------ multi round-trip input


async def test_elicitation(sdk_server, wire):
    asked = []

    async def on_elicitation(params):
        asked.append(params)
        return trio_mcp.types.ElicitResult(action="accept", content={"name": "Ada"})

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=on_elicitation) as client:
            result = await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert result.text == "Hello, Ada!"
    (params,) = asked
    assert isinstance(params, trio_mcp.types.ElicitFormParams)
    assert params.message == "What is your name?"
    assert params.requested_schema["properties"]["name"]["type"] == "string"
    first, retry = tool_calls(wire, client)
    assert "elicitation" in first["params"]["_meta"][ENVELOPE_CAPABILITIES]
    assert retry["params"]["inputResponses"] == {
        key: {"action": "accept", "content": {"name": "Ada"}} for key in retry["params"]["inputResponses"]
    }


async def test_elicitation_declined(sdk_server, wire):
    async def on_elicitation(params):
        return {"action": "decline"}

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=on_elicitation) as client:
            result = await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert result.is_error is True
    assert "decline" in result.text


async def test_elicitation_hook_fails(sdk_server, wire):
    async def on_elicitation(params):
        raise RuntimeError("the user closed the window")

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=on_elicitation) as client:
            with pytest.raises(trio_mcp.InputRequestFailed) as failed:
                await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert failed.value.method == "elicitation/create"
    assert "the user closed the window" in str(failed.value)


async def test_no_hook_means_no_capability(sdk_server, wire):
    """Without on_elicitation the client declares no elicitation; the server says it needs it (-32021)."""
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            with pytest.raises(trio_mcp.RpcError) as refused:
                await client.call_tool("greet")
            wire.check(client.protocol_version, client)
    assert refused.value.code == -32021
    assert refused.value.data["requiredCapabilities"] == {"elicitation": {"form": {}}}
    (call,) = tool_calls(wire, client)
    assert call["params"]["_meta"][ENVELOPE_CAPABILITIES] == {}


async def test_manual_rounds(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=never) as client:
            asked = await client.call_tool("greet", manual=True)
            assert isinstance(asked, trio_mcp.types.InputRequiredResult)
            ((key, question),) = asked.input_requests.items()
            assert question.method == "elicitation/create"
            assert question.params["message"] == "What is your name?"
            done = await client.call_tool(
                "greet",
                manual=True,
                input_responses={key: {"action": "accept", "content": {"name": "Bo"}}},
                request_state=asked.request_state,
            )
            wire.check(client.protocol_version, client)
    assert done.text == "Hello, Bo!"


async def test_sampling(sdk_server, wire):
    asked = []

    async def on_sampling(params):
        asked.append(params)
        return trio_mcp.types.CreateMessageResult(
            role="assistant", content=trio_mcp.types.TextContent(text="Trio is nice."), model="test-model"
        )

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_sampling=on_sampling) as client:
            result = await client.call_tool("summarize")
            wire.check(client.protocol_version, client)
    assert result.text == "test-model says: Trio is nice."
    (params,) = asked
    assert isinstance(params, trio_mcp.types.CreateMessageParams)
    assert params.max_tokens == 32
    assert params.system_prompt == "Be brief."
    (message,) = params.messages
    assert message.role == "user"
    assert message.content.text == "Summarize: trio is nice"


async def test_roots(sdk_server, wire):
    async def on_roots():
        return [
            trio_mcp.types.Root(uri="file:///srv/alpha", name="alpha"),
            trio_mcp.types.Root(uri="file:///srv/beta"),
        ]

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_roots=on_roots) as client:
            result = await client.call_tool("list_roots")
            wire.check(client.protocol_version, client)
    assert json.loads(result.text) == ["file:///srv/alpha", "file:///srv/beta"]


async def test_two_questions_in_one_round(sdk_server, wire):
    asked = []

    async def on_elicitation(params):
        asked.append(params.message)
        if params.message == "What is your name?":
            return {"action": "accept", "content": {"name": "Ada"}}
        return {"action": "accept", "content": {"ok": True}}

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=on_elicitation) as client:
            result = await client.call_tool("two_questions")
            wire.check(client.protocol_version, client)
    assert result.text == "Ada said ok=True"
    assert sorted(asked) == ["Shall I go on?", "What is your name?"]
    _, retry = tool_calls(wire, client)
    assert len(retry["params"]["inputResponses"]) == 2


async def test_state_only_rounds(sdk_server, wire):
    """counter answers input_required with a requestState and no question, three times."""
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            result = await client.call_tool("counter", {"rounds": 3})
            wire.check(client.protocol_version, client)
    assert result.text == "finished after 3 retries"
    calls = tool_calls(wire, client)
    assert len(calls) == 4
    assert all("inputResponses" not in call["params"] for call in calls)
    assert ["requestState" in call["params"] for call in calls] == [False, True, True, True]


async def test_too_many_rounds(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(max_rounds=2) as client:
            with pytest.raises(trio_mcp.InputRequestFailed):
                await client.call_tool("counter", {"rounds": 5})
            wire.check(client.protocol_version, client)
    assert len(tool_calls(wire, client)) == 2


async def test_guarded_resource_and_prompt(sdk_server, wire):
    """resources/read and prompts/get ask for input too (no requestState from these)."""

    async def on_elicitation(params):
        assert params.requested_schema["properties"]["password"]["type"] == "string"
        return {"action": "accept", "content": {"password": "sesame"}}

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(on_elicitation=on_elicitation) as client:
            secret = await client.read_resource("test://vault/gold")
            prompt = await client.get_prompt("unlock", {"topic": "trio"})
            wire.check(client.protocol_version, client)
    assert secret.contents[0].text == "secret gold, opened with sesame"
    assert prompt.messages[0].content.text == "Talk about trio; the password was sesame"
    reads = [m for m in wire.written(client) if m.get("method") == "resources/read"]
    assert len(reads) == 2
    assert "requestState" not in reads[1]["params"]


# ------------------------------------------------------ notifications


async def test_progress(sdk_server, wire):
    updates = []
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            result = await client.call_tool(
                "slow", {"steps": 3, "delay": 0.01}, on_progress=lambda *update: updates.append(update)
            )
            wire.check(client.protocol_version, client)
    assert result.text == "slept 3 steps"
    assert updates == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


async def test_concurrent_calls(sdk_server, wire):
    """Calls in flight at once: answers and progress reach the call they belong to."""
    sums, updates = {}, {steps: [] for steps in (2, 3, 4)}

    async def add(client, a):
        sums[a] = (await client.call_tool("add", {"a": a, "b": 1000})).structured_content

    async def slow(client, steps):
        def on_progress(*update):
            updates[steps].append(update)

        await client.call_tool("slow", {"steps": steps, "delay": 0.02}, on_progress=on_progress)

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            async with trio.open_nursery() as nursery:
                for steps in updates:
                    nursery.start_soon(slow, client, steps)
                for a in range(20):
                    nursery.start_soon(add, client, a)
            wire.check(client.protocol_version, client)
    assert sums == {a: {"result": a + 1000} for a in range(20)}
    for steps, got in updates.items():
        assert got == [(i, steps, f"step {i} of {steps}") for i in range(1, steps + 1)]


@pytest.mark.parametrize(
    ("log_level", "levels"),
    [(None, []), ("warning", ["warning", "error"]), ("debug", ["debug", "info", "warning", "error"])],
)
async def test_logging(sdk_server, wire, log_level, levels):
    """In 2026-07-28 logs are per request: the client's log_level asks for them."""
    routed, unclaimed = [], []
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(log_level=log_level, on_notification=unclaimed.append) as client:
            result = await client.call_tool("log_demo", on_notification=routed.append)
            wire.check(client.protocol_version, client)
    assert result.text == "logged"
    logs = [note["params"] for note in routed + unclaimed if note["method"] == "notifications/message"]
    assert [log["level"] for log in logs] == levels
    if "error" in levels:
        assert logs[-1]["data"] == {"line": "error line", "code": 7}
        assert logs[-1]["logger"] == "log_demo"
    (call,) = tool_calls(wire, client)
    assert call["params"]["_meta"].get("io.modelcontextprotocol/logLevel") == log_level


async def test_listen(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            async with client.listen(tools=True, resource_uris=["test://static/readme"]) as subscription:
                assert subscription.acknowledged == {
                    "toolsListChanged": True,
                    "resourceSubscriptions": ["test://static/readme"],
                }
                await client.call_tool("touch")
                await client.call_tool("touch", {"uri": "test://elsewhere"})
                # Both calls have returned, so all they caused is in the stream, in order;
                # prompts and resources list changes were not asked for.
                notes = []
                async for note in subscription:
                    notes.append(note)
                    if len(notes) == 3:
                        break
            wire.check(client.protocol_version, client)
    assert [note["method"] for note in notes] == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
    ]
    assert notes[0]["params"]["uri"] == "test://static/readme"
    (listen,) = [m for m in wire.written(client) if m.get("method") == "subscriptions/listen"]
    subscription_ids = {note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for note in notes}
    assert subscription_ids == {listen["id"]}
    cancels = [m for m in wire.written(client) if m.get("method") == "notifications/cancelled"]
    assert [cancel["params"]["requestId"] for cancel in cancels] == [listen["id"]]


async def test_legacy_only_methods_are_not_supported(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client() as client:
            with pytest.raises(trio_mcp.NotSupported):
                await client.ping()
            with pytest.raises(trio_mcp.NotSupported):
                await client.set_logging_level("info")
            with pytest.raises(trio_mcp.NotSupported):
                await client.subscribe_resource("test://static/readme")
            wire.check(client.protocol_version, client)
    assert [m["method"] for m in wire.written(client)] == ["server/discover"]


# ------------------------------------------------------- mcp-server-time


async def test_time_server(time_server, wire):
    with trio.fail_after(TIMEOUT):
        async with time_server.client() as client:
            assert (client.era, client.protocol_version) == ("modern", MODERN)
            assert client.server_info.name == "mcp-time"
            tools = {tool.name: tool for tool in await client.list_tools()}
            converted = await client.call_tool(
                "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
            )
            bad_zone = await client.call_tool("get_current_time", {"timezone": "Not/A_Zone"})
            with pytest.raises(trio_mcp.RpcError) as unknown:  # the low-level API: an error
                await client.call_tool("no_such_tool")
            prompts = await client.list_prompts()
            resources = await client.list_resources()
            wire.check(client.protocol_version, client)
    assert set(tools) == {"get_current_time", "convert_time"}
    assert tools["get_current_time"].annotations.read_only_hint is True
    assert converted.is_error is False
    assert converted.structured_content["target"]["datetime"].endswith("T21:00:00+09:00")
    assert json.loads(converted.text)["time_difference"] == "+9.0h"
    assert bad_zone.is_error is True
    assert unknown.value.code == -32602
    assert prompts == []
    assert resources == []

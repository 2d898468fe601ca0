"""The initialize era (2025-11-25 and older) against real servers.

``everything`` and ``filesystem`` are the reference servers on the TypeScript
SDK; they speak nothing newer than 2025-11-25, and they ask the client for
things with requests of their own (sampling, elicitation, roots). Our own
``sdk`` server, pinned to 2025-11-25, asks through the same hooks that
answer 2026-07-28 input requests. Every line the client writes is checked
against the negotiated revision's schema (the ``wire`` fixture).
"""

from __future__ import annotations

import json
import math

import pytest
import trio
from client_support import Collector

import trio_mcp
import trio_mcp.types

LEGACY = "2025-11-25"
TIMEOUT = 30  # generous: npx/node and Python servers can be slow to start on a busy machine


async def poll(condition):
    """Ask the server until ``await condition()`` is true (the caller's fail_after bounds it)."""
    while True:
        if await condition():
            return
        await trio.sleep(0.05)


async def wait_for_tool(client, name):
    """everything registers the tools that need a client capability a moment after initialize."""

    async def listed():
        return name in {tool.name for tool in await client.list_tools()}

    await poll(listed)


def fill_form(schema, **given):
    """An answer to any elicitation form: the given values, else a valid value for each field."""
    content = {}
    for name, field in schema["properties"].items():
        if name in given:
            content[name] = given[name]
        elif "enum" in field:
            content[name] = field["enum"][0]
        elif "oneOf" in field:
            content[name] = field["oneOf"][0]["const"]
        elif field.get("type") == "array":
            items = field.get("items", {})
            options = items.get("enum") or [option["const"] for option in items.get("anyOf", [])]
            content[name] = options[:1]
        elif field.get("type") == "boolean":
            content[name] = True
        elif field.get("type") in ("integer", "number"):
            content[name] = math.ceil(field.get("minimum", 1))
        else:
            content[name] = {
                "email": "ada@example.com",
                "uri": "https://example.com/",
                "date": "1815-12-10",
            }.get(field.get("format", ""), "text")
    return content


class Notes:
    """A connection-wide on_notification sink that a test can wait on."""

    def __init__(self):
        self.received = []
        self._changed = trio.Event()

    def __call__(self, note):
        self.received.append(note)
        self._changed.set()
        self._changed = trio.Event()

    def of(self, method):
        return [note["params"] for note in self.received if note["method"] == method]

    async def wait_for(self, predicate):
        while not any(predicate(note) for note in self.received):
            await self._changed.wait()


# ------------------------------------------------------------- everything


async def test_everything_handshake(everything_server, wire):
    with trio.fail_after(TIMEOUT):
        async with everything_server.client() as client:
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            assert client.server_info.name == "mcp-servers/everything"
            assert client.server_info.title == "Everything Reference Server"
            assert client.server_capabilities.logging is not None
            assert client.server_capabilities.resources["subscribe"] is True
            assert client.instructions.startswith("# Everything Server")
            await client.ping()
            echo = await client.call_tool("echo", {"message": "hi"})
            tiny = await client.call_tool("get-tiny-image")
            prompts = {prompt.name for prompt in await client.list_prompts()}
            templates = {template.uri_template for template in await client.list_resource_templates()}
            document = await client.read_resource("demo://resource/static/document/architecture.md")
            completion = await client.complete(
                {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"},
                ("resourceId", "1"),
            )
            with pytest.raises(trio_mcp.NotSupported):
                await client.discover()
            # The initialize era has no subscriptions/listen: listening takes the server's own.
            async with client.listen(tools=True) as sub:
                assert sub.acknowledged == {"toolsListChanged": True}
            wire.check(client.protocol_version, client)
    assert "hi" in echo.text
    assert any(isinstance(block, trio_mcp.types.ImageContent) for block in tiny.content)
    assert {"simple-prompt", "args-prompt"} <= prompts
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    assert document.contents[0].mime_type == "text/markdown"
    assert completion.values == ["1"]
    methods = [m.get("method") for m in wire.written(client)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_everything_sampling(everything_server, wire):
    asked = []

    async def on_sampling(params):
        asked.append(params)
        return trio_mcp.types.CreateMessageResult(
            role="assistant", content=trio_mcp.types.TextContent(text="Hello there."), model="test-model"
        )

    with trio.fail_after(TIMEOUT):
        async with everything_server.client(on_sampling=on_sampling) as client:
            await wait_for_tool(client, "trigger-sampling-request")
            result = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
            wire.check(client.protocol_version, client)
    (params,) = asked
    assert params.max_tokens == 20
    assert params.system_prompt == "You are a helpful test server."
    assert params.messages[0].content.text.endswith("Say hi")
    assert "test-model" in result.text
    assert "Hello there." in result.text
    (answer,) = [m for m in wire.written(client) if "result" in m]
    assert answer["result"]["model"] == "test-model"


async def test_everything_elicitation(everything_server, wire):
    asked = []

    async def on_elicitation(params):
        asked.append(params)
        return trio_mcp.types.ElicitResult(
            action="accept", content=fill_form(params.requested_schema, name="Ada")
        )

    with trio.fail_after(TIMEOUT):
        async with everything_server.client(on_elicitation=on_elicitation) as client:
            await wait_for_tool(client, "trigger-elicitation-request")
            result = await client.call_tool("trigger-elicitation-request")
            wire.check(client.protocol_version, client)
    (params,) = asked
    assert isinstance(params, trio_mcp.types.ElicitFormParams)
    assert {"name", "check", "email", "integer"} <= set(params.requested_schema["properties"])
    assert result.is_error is False
    assert "User provided the requested information" in result.text
    assert "Name: Ada" in result.text


async def test_everything_roots(everything_server, wire):
    notes = Notes()
    calls = []

    async def on_roots():
        calls.append(1)
        return [trio_mcp.types.Root(uri="file:///srv/project", name="project")]

    with trio.fail_after(TIMEOUT):
        async with everything_server.client(on_roots=on_roots, on_notification=notes) as client:
            # The server asks for the roots after initialize, then logs that it has them.
            await notes.wait_for(lambda note: "Roots updated" in str(note.get("params", {}).get("data")))
            await wait_for_tool(client, "get-roots-list")
            result = await client.call_tool("get-roots-list")
            wire.check(client.protocol_version, client)
    assert calls
    assert "file:///srv/project" in result.text
    (initialize,) = [m for m in wire.written(client) if m.get("method") == "initialize"]
    assert "roots" in initialize["params"]["capabilities"]


async def test_everything_progress(everything_server, wire):
    updates = []
    with trio.fail_after(TIMEOUT):
        async with everything_server.client() as client:
            result = await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                on_progress=lambda *update: updates.append(update),
            )
            wire.check(client.protocol_version, client)
    assert "Long running operation completed" in result.text
    assert updates == [(1, 3, None), (2, 3, None), (3, 3, None)]


async def test_everything_logging_level(everything_server, wire):
    notes = Notes()
    first = "demo://resource/static/document/architecture.md"
    second = "demo://resource/static/document/features.md"

    def subscribed_log(uri):
        return lambda note: note["method"] == "notifications/message" and uri in str(note["params"]["data"])

    with trio.fail_after(TIMEOUT):
        async with everything_server.client(on_notification=notes) as client:
            await client.set_logging_level("error")
            await client.subscribe_resource(first)  # logs at info: filtered out
            await client.set_logging_level("info")
            await client.subscribe_resource(second)  # logged
            await notes.wait_for(subscribed_log(second))
            wire.check(client.protocol_version, client)
    # The server's notifications arrive in order: a log about the first
    # subscription would have come before the one about the second.
    logged = [note for note in notes.received if subscribed_log(first)(note) or subscribed_log(second)(note)]
    assert [note["params"]["level"] for note in logged] == ["info"]
    assert second in logged[0]["params"]["data"]


async def test_everything_resource_subscription(everything_server, wire):
    notes = Notes()
    uri = "demo://resource/static/document/features.md"
    with trio.fail_after(TIMEOUT):
        async with everything_server.client(on_notification=notes) as client:
            await client.subscribe_resource(uri)
            started = await client.call_tool("toggle-subscriber-updates")  # sends one update at once
            await notes.wait_for(
                lambda note: (
                    note["method"] == "notifications/resources/updated" and note["params"]["uri"] == uri
                )
            )
            stopped = await client.call_tool("toggle-subscriber-updates")
            await client.unsubscribe_resource(uri)
            wire.check(client.protocol_version, client)
    assert "Started" in started.text
    assert "Stopped" in stopped.text


# ------------------------------------------------------------- filesystem


async def test_filesystem_roots_replace_the_command_line_directories(filesystem_server, wire, tmp_path):
    given, rooted = tmp_path / "given", tmp_path / "rooted"
    given.mkdir()
    rooted.mkdir()
    (given / "a.txt").write_text("alpha\n")
    (rooted / "b.txt").write_text("beta\n")

    async def on_roots():
        return [trio_mcp.types.Root(uri=rooted.as_uri(), name="rooted")]

    with trio.fail_after(TIMEOUT):
        async with filesystem_server.client(str(given), on_roots=on_roots) as client:
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            assert client.server_info.name == "secure-filesystem-server"

            # The server asks for the roots after initialize; wait until it has used them.
            async def switched():
                return str(rooted) in (await client.call_tool("list_allowed_directories")).text

            await poll(switched)
            allowed = await client.call_tool("list_allowed_directories")
            outside = await client.call_tool("read_text_file", {"path": str(given / "a.txt")})
            inside = await client.call_tool("read_text_file", {"path": str(rooted / "b.txt")})
            wire.check(client.protocol_version, client)
    assert str(given) not in allowed.text
    assert outside.is_error is True
    assert "Access denied" in outside.text
    assert inside.is_error is False
    assert inside.text == "beta\n"
    assert inside.structured_content == {"content": "beta\n"}


async def test_filesystem_without_roots_keeps_the_command_line_directories(filesystem_server, wire, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    with trio.fail_after(TIMEOUT):
        async with filesystem_server.client(str(tmp_path)) as client:
            allowed = await client.call_tool("list_allowed_directories")
            read = await client.call_tool("read_text_file", {"path": str(tmp_path / "a.txt")})
            wire.check(client.protocol_version, client)
    assert str(tmp_path) in allowed.text
    assert read.text == "alpha\n"


# ------------------------------------------- our SDK server, pinned to legacy


async def test_sdk_pinned_to_legacy_asks_through_the_same_hooks(sdk_server, wire):
    """greet, summarize, list_roots and two_questions: server requests instead of input_required."""
    asked = []

    async def on_elicitation(params):
        asked.append(params.message)
        content = fill_form(params.requested_schema, name="Ada", ok=False, password="sesame")
        return {"action": "accept", "content": content}

    async def on_sampling(params):
        assert params.max_tokens == 32
        return {"role": "assistant", "content": {"type": "text", "text": "Short."}, "model": "test-model"}

    async def on_roots():
        return {"roots": [{"uri": "file:///srv/alpha", "name": "alpha"}]}

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(
            protocol=LEGACY, on_elicitation=on_elicitation, on_sampling=on_sampling, on_roots=on_roots
        ) as client:
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            assert client.server_info.name == "trio-mcp-test-server"
            greeted = await client.call_tool("greet")
            summary = await client.call_tool("summarize")
            roots = await client.call_tool("list_roots")
            both = await client.call_tool("two_questions")
            counter = await client.call_tool("counter")  # needs 2026-07-28
            secret = await client.read_resource("test://vault/gold")
            wire.check(client.protocol_version, client)
    assert greeted.text == "Hello, Ada!"
    assert summary.text == "test-model says: Short."
    assert json.loads(roots.text) == ["file:///srv/alpha"]
    assert both.text == "Ada said ok=False"
    assert counter.is_error is True
    assert secret.contents[0].text == "secret gold, opened with sesame"
    assert asked == ["What is your name?", "What is your name?", "Shall I go on?", "Password for gold?"]
    written = wire.written(client)
    assert written[0]["method"] == "initialize"  # pinned: no probe
    assert not any("inputResponses" in m.get("params", {}) for m in written)
    answers = [m for m in written if "result" in m]
    assert len(answers) == 6  # elicitation x 4, sampling, roots


async def test_sdk_pinned_to_legacy_logging(sdk_server, wire):
    """Log messages name no call: they reach the client's on_notification, never the call's callback."""
    notes, per_call = Collector(), Collector()

    def logs():
        return [note["params"]["level"] for note in notes if note["method"] == "notifications/message"]

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(protocol=LEGACY, on_notification=notes.append) as client:
            await client.set_logging_level("warning")
            await client.call_tool("log_demo", on_notification=per_call.append)
            await notes.wait_until(lambda _: len(logs()) >= 2)
            wire.check(client.protocol_version, client)
    assert logs() == ["warning", "error"]
    assert per_call == []


async def test_sdk_pinned_to_legacy_subscription_and_progress(sdk_server, wire):
    notes, updates = Collector(), []
    uri = "test://static/readme"
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(protocol=LEGACY, on_notification=notes.append) as client:
            await client.subscribe_resource(uri)
            await client.call_tool("touch")
            await notes.wait_len(1)
            await client.unsubscribe_resource(uri)
            await client.call_tool("touch")
            await client.call_tool(
                "slow", {"steps": 2, "delay": 0.01}, on_progress=lambda *update: updates.append(update)
            )
            wire.check(client.protocol_version, client)
    assert notes == [{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}]
    assert updates == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]


async def test_sdk_pinned_to_legacy_concurrent_server_requests(sdk_server, wire):
    """Server requests of several calls in flight at once are each answered once."""
    results = {}

    async def on_elicitation(params):
        await trio.sleep(0.01)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def on_sampling(params):
        return {"role": "assistant", "content": {"type": "text", "text": "Short."}, "model": "m"}

    async def on_roots():
        return []

    async def call(client, name):
        results[name] = (await client.call_tool(name)).text

    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(
            protocol=LEGACY, on_elicitation=on_elicitation, on_sampling=on_sampling, on_roots=on_roots
        ) as client:
            async with trio.open_nursery() as nursery:
                for name in ("greet", "summarize", "list_roots", "greet"):
                    nursery.start_soon(call, client, name)
            wire.check(client.protocol_version, client)
    assert results == {"greet": "Hello, Ada!", "summarize": "m says: Short.", "list_roots": "[]"}
    assert len([m for m in wire.written(client) if "result" in m]) == 4

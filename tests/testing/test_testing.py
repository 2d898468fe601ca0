"""Tests of `trio_mcp.testing`: the in-memory fake server, under an autojumping MockClock.

Every test takes pytest-trio's ``autojump_clock`` fixture: timeouts elapse in
virtual time, so the tests that wait for a 60-second budget take no time, and
times can be asserted exactly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import orjson
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings, strategies as st

import trio_mcp
from trio_mcp import (
    InputRequestFailed,
    MessageTooLarge,
    RequestTimeout,
    RpcError,
    ServerGone,
    TransportClosed,
    VersionMismatch,
)
from trio_mcp._transports.stream import StreamChannel
from trio_mcp.testing import FakeServer, open_fake_client, open_fake_transport
from trio_mcp.testing.strategies import Misbehaviour, malformed_lines, misbehaviours, odd_results
from trio_mcp.types import (
    CallToolResult,
    ElicitFormParams,
    InputRequest,
    InputRequiredResult,
    TextContent,
    Tool,
)

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ASK_NAME = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "Your name?", "requestedSchema": NAME_SCHEMA},
}


def ours(names: list[str]) -> list[str]:
    return [name for name in names if name.startswith(("trio_mcp:", "fake-server:"))]


def live_tasks() -> list[str]:
    """The names of every task in the run, the test's own included."""
    names: list[str] = []

    def walk(task: trio.lowlevel.Task) -> None:
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                names.append(child.name)
                walk(child)

    walk(trio.lowlevel.current_root_task())
    return names


async def answer_name(params):
    assert isinstance(params, ElicitFormParams)
    return {"action": "accept", "content": {"name": "Ada"}}


# ------------------------------------------------------------ the example


def docstring_example() -> str:
    """The code block of the module docstring that shows an application test."""
    doc = trio_mcp.testing.__doc__
    assert doc is not None
    start = doc.index("An application test, with the ``autojump_clock`` fixture of pytest-trio::")
    block = doc[start:].split("::\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


async def test_the_module_docstring_example_runs_as_written(autojump_clock):
    namespace: dict[str, object] = {"__name__": "example"}
    exec(compile(docstring_example(), "trio_mcp.testing example", "exec"), namespace)
    tests = {name: value for name, value in namespace.items() if name.startswith("test_")}
    assert sorted(tests) == ["test_forecast", "test_forecast_gives_up_after_five_seconds"]
    for test in tests.values():
        await test(autojump_clock)


# The same application test, as a user would write it in their own suite.


async def forecast(client: trio_mcp.Client, city: str) -> str:
    with trio.move_on_after(5):
        result = await client.call_tool("forecast", {"city": city})
        return result.text
    return "no forecast today"


async def test_example_application_test(autojump_clock):
    server = FakeServer(tools=["forecast"])
    server.on_tool("forecast", lambda request: f"sunny in {request.arguments['city']}")
    async with open_fake_client(server) as client:
        assert await forecast(client, "Paris") == "sunny in Paris"
    assert server.requests[-1].arguments == {"city": "Paris"}


async def test_example_application_gives_up(autojump_clock):
    server = FakeServer(tools=["forecast"])
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(forecast, client, "Paris")
            request = await server.expect_request("tools/call", name="forecast")
            start = trio.current_time()
            await request.wait_cancelled()
            assert trio.current_time() - start == 5


def test_import_trio_mcp_does_not_import_the_testing_module():
    code = "import sys, trio_mcp; print('trio_mcp.testing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -------------------------------------------------------------- handshake


async def test_modern_handshake_from_the_description(autojump_clock):
    server = FakeServer(
        tools=["echo"],
        prompts=["greet"],
        server_info=("weather", "2.0"),
        instructions="Be brief.",
    )
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(client_info=("my-app", "1.2"))
    ) as client:
        assert client.era == "modern"
        assert client.protocol_version == "2026-07-28"
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("weather", "2.0")
        assert client.instructions == "Be brief."
        assert client.server_capabilities.tools == {}
        assert client.server_capabilities.prompts == {}
        assert client.server_capabilities.resources is None
        assert server.connected
    assert not server.connected
    (probe,) = server.received
    assert probe["method"] == "server/discover"
    assert probe["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] == {
        "name": "my-app",
        "version": "1.2",
    }
    assert server.requests[0].response["result"]["supportedVersions"] == ["2026-07-28"]


async def test_legacy_handshake_probe_then_initialize(autojump_clock):
    server = FakeServer(era="legacy", tools=["echo"], instructions="Hi.")
    async with open_fake_client(server) as client:
        assert client.era == "legacy"
        assert client.protocol_version == "2025-11-25"
        assert client.instructions == "Hi."
        assert client.server_capabilities.logging == {}
        assert client.server_capabilities.tools == {}
        await client.ping()
    methods = [message.get("method") for message in server.received]
    assert methods == ["server/discover", "initialize", "notifications/initialized", "ping"]
    assert server.requests[0].response["error"]["code"] == -32601


async def test_legacy_version_follows_the_offer_or_the_constructor(autojump_clock):
    async with open_fake_client(
        FakeServer(era="legacy"), options=trio_mcp.ClientOptions(protocol="2025-06-18")
    ) as client:
        assert client.protocol_version == "2025-06-18"
    async with open_fake_client(FakeServer(era="legacy", protocol_version="2025-03-26")) as client:
        assert client.protocol_version == "2025-03-26"


async def test_era_mismatches_fail_as_with_real_servers(autojump_clock):
    with pytest.raises(VersionMismatch):
        async with open_fake_client(
            FakeServer(era="modern"), options=trio_mcp.ClientOptions(protocol="2025-11-25")
        ):
            pass  # pragma: no cover
    with pytest.raises(VersionMismatch):
        async with open_fake_client(
            FakeServer(era="legacy"), options=trio_mcp.ClientOptions(protocol="2026-07-28")
        ):
            pass  # pragma: no cover
    with pytest.raises(VersionMismatch):
        async with open_fake_client(FakeServer(protocol_version="2027-01-01")):
            pass  # pragma: no cover


async def test_scripted_handshake(autojump_clock):
    server = FakeServer(era="modern", handshake=False)

    async def script():
        probe = await server.expect_request("server/discover")
        await probe.respond(
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {"listChanged": True}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "9"}},
            }
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(script)
        async with open_fake_client(server) as client:
            assert client.server_info.name == "scripted"
            assert client.server_capabilities.tools == {"listChanged": True}


async def test_silent_probe_times_out_in_virtual_time_then_initialize(autojump_clock):
    server = FakeServer(era="legacy", handshake=False)

    async def script():
        probe = await server.expect_request("server/discover")
        start = trio.current_time()
        initialize = await server.expect_request("initialize")
        assert trio.current_time() - start == 3
        assert not probe.answered
        await initialize.respond(
            {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(script)
        async with open_fake_client(server, options=trio_mcp.ClientOptions(probe_timeout=3)) as client:
            assert client.protocol_version == "2025-06-18"
    assert server.received[-1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


# ---------------------------------------------------------------- tools


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_tool_handlers_in_every_shape(autojump_clock, era):
    server = FakeServer(era=era, tools=["text", "plain", "model", "slow"])
    server.on_tool("text", lambda request: "just text")
    server.on_tool("plain", lambda request: {"content": [], "structuredContent": {"n": 1}})
    server.on_tool("model", lambda request: CallToolResult(content=[TextContent(text="m")], is_error=True))

    async def slow(request):
        await trio.sleep(30)
        await request.respond({"content": [{"type": "text", "text": "done"}]})

    server.on_tool("slow", slow)
    async with open_fake_client(server) as client:
        assert (await client.call_tool("text")).text == "just text"
        assert (await client.call_tool("plain")).structured_content == {"n": 1}
        failed = await client.call_tool("model")
        assert failed.is_error
        assert failed.text == "m"
        start = trio.current_time()
        assert (await client.call_tool("slow")).text == "done"
        assert trio.current_time() - start == 30
    if era == "modern":
        assert server.requests[1].response["result"]["resultType"] == "complete"
    else:
        assert "resultType" not in server.requests[-1].response["result"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_lists_from_the_description(autojump_clock, era):
    server = FakeServer(
        era=era,
        tools=[
            "a",
            {"name": "b", "inputSchema": {"type": "object"}, "title": "B"},
            Tool(name="c", input_schema={}),
        ],
        prompts=["greet"],
        resources=["mem://one"],
        resource_templates=["mem://{id}"],
    )
    async with open_fake_client(server) as client:
        assert [tool.name for tool in await client.list_tools()] == ["a", "b", "c"]
        assert [prompt.name for prompt in await client.list_prompts()] == ["greet"]
        assert [resource.uri for resource in await client.list_resources()] == ["mem://one"]
        templates = await client.list_resource_templates()
        assert [template.uri_template for template in templates] == ["mem://{id}"]
        assert client.server_capabilities.resources == {}
        server.tools.append({"name": "d", "inputSchema": {"type": "object"}})
        assert [tool.name for tool in await client.list_tools()] == ["a", "b", "c", "d"]


async def test_lists_are_left_to_the_test_without_a_description(autojump_clock):
    server = FakeServer()
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            found = []

            async def app():
                found.extend([tool.name async for tool in client.iter_tools()])

            nursery.start_soon(app)
            first = await server.expect_request("tools/list")
            assert "cursor" not in first.params
            await first.respond({"tools": [{"name": "x", "inputSchema": {}}], "nextCursor": "2"})
            second = await server.expect_request("tools/list")
            assert second.params["cursor"] == "2"
            await second.respond({"tools": [{"name": "y", "inputSchema": {}}]})
        assert found == ["x", "y"]


async def test_on_request_overrides_the_fakes_own_answers(autojump_clock):
    server = FakeServer(tools=["a"])
    server.on_request("tools/list", lambda request: {"tools": [{"name": "other", "inputSchema": {}}]})
    server.on_request("completion/complete", lambda request: {"completion": {"values": ["Ada", "Alan"]}})
    async with open_fake_client(server) as client:
        assert [tool.name for tool in await client.list_tools()] == ["other"]
        completion = await client.complete({"type": "ref/prompt", "name": "p"}, ("name", "A"))
        assert completion.values == ["Ada", "Alan"]
        assert client.server_capabilities.completions == {}


async def test_scripted_answers_and_errors(autojump_clock):
    server = FakeServer(era="legacy", manual=True)
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            outcomes = []

            async def app():
                outcomes.append((await client.call_tool("echo", {"text": "hi"})).text)
                try:
                    await client.read_resource("mem://missing")
                except RpcError as exc:
                    outcomes.append((exc.code, exc.message, exc.data))

            nursery.start_soon(app)
            call = await server.expect_request("tools/call", name="echo")
            assert call.arguments == {"text": "hi"}
            await call.respond({"content": [{"type": "text", "text": call.arguments["text"]}]})
            read = await server.expect_request("resources/read")
            await read.error(-32002, "Resource not found", {"uri": read.params["uri"]})
        assert outcomes == ["hi", (-32002, "Resource not found", {"uri": "mem://missing"})]
        with pytest.raises(RuntimeError, match="answered already"):
            await call.respond({})


async def test_expect_request_names_what_came_instead(autojump_clock):
    server = FakeServer(manual=True)
    async with open_fake_client(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "b")
        with pytest.raises(
            AssertionError, match=r"expected a tools/call 'a' request, got <FakeRequest 2 tools/call 'b'>"
        ):
            await server.expect_request("tools/call", name="a")
        nursery.cancel_scope.cancel()


# --------------------------------------------------------- notifications


async def test_legacy_notifications_reach_the_sink_and_invalidate_the_cache(autojump_clock):
    server = FakeServer(era="legacy", tools=["a"])
    seen = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(on_notification=seen.append)
    ) as client:
        await server.notify("notifications/message", {"level": "info", "data": "hello"})
        await server.notify("notifications/tools/list_changed")
        await client.list_tools()
    assert [note["method"] for note in seen] == ["notifications/message", "notifications/tools/list_changed"]
    assert seen[0]["params"] == {"level": "info", "data": "hello"}


async def test_modern_cache_honours_ttl_ms_and_list_changed(autojump_clock):
    server = FakeServer(tools=["a"], ttl_ms=10_000)
    async with open_fake_client(server) as client:
        await client.list_tools()
        await client.list_tools()
        assert [r.method for r in server.requests].count("tools/list") == 1
        await trio.sleep(10)
        await client.list_tools()
        assert [r.method for r in server.requests].count("tools/list") == 2


async def test_modern_listen_stream(autojump_clock):
    server = FakeServer(tools=["a"], manual=True)
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            got = []

            async def app():
                async with client.listen(tools=True) as subscription:
                    assert subscription.acknowledged == {"toolsListChanged": True}
                    got.extend([note["method"] async for note in subscription])

            nursery.start_soon(app)
            listen = await server.expect_request("subscriptions/listen")
            await listen.acknowledge()
            await listen.notify("notifications/tools/list_changed")
            await listen.respond()  # the server ends the stream
        assert got == ["notifications/tools/list_changed"]
        ending = listen.response["result"]
        assert ending["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen.id}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_progress_reaches_on_progress(autojump_clock, era):
    server = FakeServer(era=era, tools=["slow"])
    sent = []

    async def slow(request):
        for step in range(1, 4):
            await trio.sleep(1)
            sent.append(await request.progress(step, 3, f"step {step}"))
        return "done"

    server.on_tool("slow", slow)
    progress = []
    async with open_fake_client(server) as client:
        result = await client.call_tool("slow", on_progress=lambda *args: progress.append(args))
        assert result.text == "done"
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert sent == [True] * 3
        await client.call_tool("slow")  # no on_progress: no token, nothing sent
        assert sent == [True] * 3 + [False] * 3


async def test_modern_logs_follow_the_requests_log_level(autojump_clock):
    server = FakeServer(tools=["work"])
    sent = []

    async def work(request):
        sent.append(await request.log("debug", "details"))
        sent.append(await request.log("warning", {"disk": "full"}, logger="db"))
        return "ok"

    server.on_tool("work", work)
    logs = []
    # (Whichever of the call's and the client's callbacks a log reaches.)
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(log_level="info", on_notification=logs.append)
    ) as client:
        await client.call_tool("work", on_notification=logs.append)
        assert server.requests[-1].log_level == "info"
        with pytest.raises(ValueError, match="log_level must be None or one of"):
            client.log_level = "loud"  # type: ignore[assignment]
        assert client.log_level == "info"
        client.log_level = None
        await client.call_tool("work")
    assert sent == [False, True, False, False]
    assert logs == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "data": {"disk": "full"}, "logger": "db"},
        }
    ]


async def test_legacy_logs_follow_set_level(autojump_clock):
    server = FakeServer(era="legacy", tools=["work"])
    sent = []

    async def work(request):
        sent.append(await request.log("info", "chatter"))
        sent.append(await request.log("error", "trouble"))
        return "ok"

    server.on_tool("work", work)
    seen = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(log_level="warning", on_notification=seen.append)
    ) as client:
        assert server.log_level == "warning"
        await client.call_tool("work")
        with pytest.raises(ValueError, match="unknown log level"):
            await server.requests[-1].log("loud", "x")
        # The client hands notifications to on_notification in a task of its
        # own: a round trip lets it run before the block ends.
        await client.ping()
    assert sent == [False, True]
    assert [note["params"]["data"] for note in seen] == ["trouble"]
    assert server.log_level == "warning"


async def test_stderr_reaches_on_stderr(autojump_clock):
    server = FakeServer()
    lines = []
    async with open_fake_client(server, on_stderr=lines.append) as client:
        await server.write_stderr("starting\nready\n")
        await client.discover()
        assert client.session._channel.stderr_tail == "starting\nready\n"
        assert client.session.statistics().stderr_lines == 2
    assert lines == ["starting", "ready"]


# ---------------------------------------------------- multi round-trip input


async def test_input_required_rounds_through_the_hooks(autojump_clock):
    server = FakeServer(tools=["greet"])

    async def greet(request):
        if request.input_responses is None:
            await request.input_required({"name": ASK_NAME}, request_state="round-1")
            return None
        assert request.request_state == "round-1"
        answer = request.input_responses["name"]
        return f"hello {answer['content']['name']}"

    server.on_tool("greet", greet)
    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_elicitation=answer_name)) as client:
        assert (await client.call_tool("greet", {"formal": True})).text == "hello Ada"
    first, second = (r for r in server.requests if r.method == "tools/call")
    assert first.meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert second.arguments == {"formal": True}
    assert second.input_responses == {"name": {"action": "accept", "content": {"name": "Ada"}}}


async def test_one_round_asking_for_every_kind_of_input(autojump_clock):
    server = FakeServer(tools=["plan"])

    async def plan(request):
        if request.input_responses is None:
            return InputRequiredResult(
                input_requests={
                    "who": InputRequest(method="elicitation/create", params=ASK_NAME["params"]),
                    "llm": InputRequest(
                        method="sampling/createMessage",
                        params={
                            "messages": [{"role": "user", "content": {"type": "text", "text": "?"}}],
                            "maxTokens": 9,
                        },
                    ),
                    "where": InputRequest(method="roots/list"),
                }
            )
        answers = request.input_responses
        return f"{answers['who']['content']['name']}/{answers['llm']['model']}/{answers['where']['roots'][0]['uri']}"

    async def sample(params):
        assert params.max_tokens == 9
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "tiny"}

    server.on_tool("plan", plan)
    async with open_fake_client(
        server,
        options=trio_mcp.ClientOptions(
            on_elicitation=answer_name, on_sampling=sample, on_roots=lambda: [{"uri": "file:///w"}]
        ),
    ) as client:
        assert (await client.call_tool("plan")).text == "Ada/tiny/file:///w"
    assert server.requests[1].response["result"]["resultType"] == "input_required"


async def test_input_required_in_manual_mode(autojump_clock):
    server = FakeServer(tools=["greet"])
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(capabilities={"elicitation": {"form": {}}})
    ) as client:
        async with trio.open_nursery() as nursery:
            results = []

            async def app():
                asked = await client.call_tool("greet", manual=True)
                assert isinstance(asked, InputRequiredResult)
                assert asked.input_requests["name"].method == "elicitation/create"
                done = await client.call_tool(
                    "greet",
                    manual=True,
                    input_responses={"name": {"action": "decline"}},
                    request_state=asked.request_state,
                )
                results.append(done)

            nursery.start_soon(app)
            first = await server.expect_request("tools/call", name="greet")
            assert first.meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}}}
            await first.input_required({"name": ASK_NAME}, request_state='s\u2028"1')
            second = await server.expect_request("tools/call", name="greet")
            assert second.request_state == 's\u2028"1'
            assert second.input_responses == {"name": {"action": "decline"}}
            await second.respond({"content": [{"type": "text", "text": "declined"}]})
        assert results[0].text == "declined"


async def test_input_required_without_a_hook_fails_locally(autojump_clock):
    server = FakeServer(tools=["greet"])
    server.on_tool("greet", lambda request: request.input_required({"name": ASK_NAME}))
    async with open_fake_client(server) as client:
        with pytest.raises(InputRequestFailed, match="no on_elicitation hook"):
            await client.call_tool("greet")
    assert len([r for r in server.requests if r.method == "tools/call"]) == 1


async def test_input_timeout_bounds_the_rounds_in_virtual_time(autojump_clock):
    server = FakeServer(tools=["greet"])
    server.on_tool("greet", lambda request: request.input_required({"name": ASK_NAME}))

    async def slow_user(params):
        await trio.sleep(1000)

    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(on_elicitation=slow_user, input_timeout=120)
    ) as client:
        start = trio.current_time()
        with pytest.raises(RequestTimeout):
            await client.call_tool("greet")
        assert trio.current_time() - start == 120


async def test_input_required_belongs_to_the_modern_era(autojump_clock):
    server = FakeServer(era="legacy", manual=True)
    async with open_fake_client(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "x")
        request = await server.receive_request()
        with pytest.raises(RuntimeError, match="2026-07-28 era"):
            await request.input_required({"name": ASK_NAME})
        await request.respond({"content": []})


# ------------------------------------------------- legacy server requests


async def test_legacy_server_requests_reach_the_hooks(autojump_clock):
    server = FakeServer(era="legacy", tools=["ask"])

    async def ask(request):
        answer = await server.send_request(
            "elicitation/create", {"message": "Your name?", "requestedSchema": NAME_SCHEMA}
        )
        roots = await server.send_request("roots/list")
        return f"{answer['content']['name']} at {roots['roots'][0]['uri']}"

    server.on_tool("ask", ask)
    async with open_fake_client(
        server,
        options=trio_mcp.ClientOptions(
            on_elicitation=answer_name, on_roots=lambda: [{"uri": "file:///work"}]
        ),
    ) as client:
        assert (await client.call_tool("ask")).text == "Ada at file:///work"
        assert (await server.send_request("ping")) == {}
        with pytest.raises(RpcError) as caught:
            await server.send_request("sampling/createMessage", {"messages": [], "maxTokens": 5})
        assert caught.value.code == -32601
    answers = [m for m in server.received if "method" not in m]
    assert [m["id"] for m in answers] == [1, 2, 3, 4]


async def test_legacy_server_request_withdrawn_by_cancellation(autojump_clock):
    server = FakeServer(era="legacy")
    hook = {"started": False, "cancelled": False}

    async def patient_user(params):
        hook["started"] = True
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            hook["cancelled"] = True
            raise

    async with open_fake_client(server, options=trio_mcp.ClientOptions(on_elicitation=patient_user)):
        with trio.move_on_after(10):
            await server.send_request("elicitation/create", {"message": "?", "requestedSchema": NAME_SCHEMA})
        await trio.sleep(1)
    assert hook == {"started": True, "cancelled": True}
    assert [m for m in server.received if "method" not in m] == []


async def test_send_request_belongs_to_the_legacy_era(autojump_clock):
    server = FakeServer()
    async with open_fake_client(server):
        with pytest.raises(RuntimeError, match="servers send no requests"):
            await server.send_request("roots/list")


# ---------------------------------------------------- timeouts and cancellation


async def test_request_timeout_in_virtual_time_and_the_late_answer(autojump_clock):
    server = FakeServer(tools=["hang"])
    diagnostics = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(request_timeout=60, on_log=diagnostics.append)
    ) as client:
        async with trio.open_nursery() as nursery:
            errors = []

            async def app():
                try:
                    await client.call_tool("hang")
                except RequestTimeout as exc:
                    errors.append((exc.method, exc.timeout, trio.current_time()))

            start = trio.current_time()
            nursery.start_soon(app)
            request = await server.expect_request("tools/call")
            await request.wait_cancelled()
        assert errors == [("tools/call", 60, start + 60)]
        cancel = server.received[-1]
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == request.id
        await request.respond({"content": []})  # too late: dropped by the client
        await trio.sleep(1)
        assert any("late answer" in line for line in diagnostics)
        server.on_tool("hang", lambda request: "fine now")
        assert (await client.call_tool("hang")).text == "fine now"


async def test_client_cancellation_cancels_the_handler(autojump_clock):
    server = FakeServer(era="legacy", tools=["forever"])
    handler = {"cancelled_at": None}
    stopped = trio.Event()

    async def forever(request):
        try:
            await trio.sleep_forever()
        finally:
            handler["cancelled_at"] = trio.current_time()
            stopped.set()

    server.on_tool("forever", forever)
    async with open_fake_client(server) as client:
        start = trio.current_time()
        with trio.move_on_after(7):
            await client.call_tool("forever")
        with trio.fail_after(1):
            await stopped.wait()
        assert handler["cancelled_at"] == start + 7
        request = server.requests[-1]
        assert request.cancelled
        assert not request.answered


# --------------------------------------------------------------- death


async def test_exit_fails_requests_with_server_gone_after_earlier_output(autojump_clock):
    server = FakeServer(era="legacy", tools=["a", "b"])
    async with open_fake_client(server) as client:
        async with trio.open_nursery() as nursery:
            outcomes = []

            async def call(name):
                try:
                    outcomes.append((await client.call_tool(name)).text)
                except ServerGone as exc:
                    outcomes.append(exc)

            nursery.start_soon(call, "a")
            first = await server.expect_request("tools/call", name="a")
            nursery.start_soon(call, "b")
            second = await server.expect_request("tools/call", name="b")
            await server.write_stderr("fatal: out of cheese")
            await first.respond({"content": [{"type": "text", "text": "answered in time"}]})
            await server.exit(3)
            assert not server.connected
            with pytest.raises(trio.BrokenResourceError):
                await second.respond({"content": []})
        assert outcomes[0] == "answered in time"
        gone = outcomes[1]
        assert isinstance(gone, ServerGone)
        assert gone.exit_code == 3
        assert gone.stderr_tail == "fatal: out of cheese\n"
        assert str(gone).startswith("server 'fake-server' exited with code 3")
        with pytest.raises(ServerGone):
            await client.list_tools()


async def test_exit_by_signal_and_reconnecting(autojump_clock):
    server = FakeServer(era="legacy", tools=["a"])
    server.on_tool("a", lambda request: "alive")

    async def killed():
        async with open_fake_client(server) as client:
            await server.exit(signal=signal.SIGKILL)
            await client.call_tool("a")

    with pytest.raises(ServerGone) as caught:
        await killed()
    assert caught.value.signal == signal.SIGKILL
    assert caught.value.exit_code is None
    # A restarted server: the same fake, a new connection.
    async with open_fake_client(server) as client:
        assert (await client.call_tool("a")).text == "alive"
    assert [m.get("method") for m in server.received].count("initialize") == 2


# ---------------------------------------------------------------- closing


async def test_close_leaves_nothing_behind(autojump_clock):
    server = FakeServer(era="legacy", tools=["forever"], manual=True)
    handler_started = trio.Event()
    handler_stopped = trio.Event()

    async def forever(request):
        handler_started.set()
        try:
            await trio.sleep_forever()
        finally:
            handler_stopped.set()

    server.on_tool("forever", forever)
    assert ours(live_tasks()) == []
    closed = []
    async with open_fake_client(server) as client:

        async def call(name):
            try:
                await client.call_tool(name)
            except TransportClosed:
                closed.append(name)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "forever")
            nursery.start_soon(call, "scripted")
            leftover = await server.expect_request("tools/call", name="scripted")
            with trio.fail_after(1):
                await handler_started.wait()
            assert "fake-server:tools/call" in live_tasks()
            start = trio.current_time()
            await client.session.aclose()
            assert trio.current_time() == start  # closing takes no time
        assert sorted(closed) == ["forever", "scripted"]
    assert handler_stopped.is_set()
    assert ours(live_tasks()) == []
    assert not server.connected
    with pytest.raises(trio.BrokenResourceError):
        await leftover.respond({})
    with pytest.raises(trio.BrokenResourceError):
        await server.notify("notifications/message")


async def test_unanswered_requests_do_not_outlive_their_connection(autojump_clock):
    server = FakeServer(era="legacy", manual=True)
    async with open_fake_client(server) as client:
        with trio.move_on_after(1):
            await client.call_tool("x")
    async with open_fake_client(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "y")
        assert (await server.receive_request()).name == "y"
        nursery.cancel_scope.cancel()


async def test_one_client_at_a_time(autojump_clock):
    server = FakeServer()
    async with open_fake_client(server):
        with pytest.raises(RuntimeError, match="one at a time"):
            async with open_fake_client(server):
                pass  # pragma: no cover


# ------------------------------------------------------ handler mistakes


async def test_a_failing_handler_answers_an_error_and_fails_the_block(autojump_clock):
    server = FakeServer(tools=["buggy"])
    server.on_tool("buggy", lambda request: request.arguments["missing"])
    answers = []

    async def app():
        async with open_fake_client(server) as client:
            try:
                await client.call_tool("buggy")
            except RpcError as exc:
                answers.append((exc.code, exc.message))

    with pytest.raises(KeyError, match="missing"):
        await app()
    assert answers == [(-32603, "the fake server's handler raised KeyError('missing')")]


async def test_a_failing_handler_is_noted_on_the_blocks_own_error(autojump_clock):
    server = FakeServer(tools=["buggy"])
    server.on_tool("buggy", lambda request: 1 / 0)
    with pytest.raises(RpcError) as caught:
        async with open_fake_client(server) as client:
            await client.call_tool("buggy")
    assert any("ZeroDivisionError" in note for note in caught.value.__notes__)


async def test_rpc_error_from_a_handler_is_an_answer_not_a_bug(autojump_clock):
    server = FakeServer(tools=["strict"])

    def strict(request):
        raise RpcError(-32602, "Invalid params", {"field": "x"})

    server.on_tool("strict", strict)
    async with open_fake_client(server) as client:
        with pytest.raises(RpcError) as caught:
            await client.call_tool("strict")
    assert (caught.value.code, caught.value.data) == (-32602, {"field": "x"})


async def test_a_handler_that_answers_nothing_is_a_bug(autojump_clock):
    server = FakeServer(tools=["mute"])
    server.on_tool("mute", lambda request: None)

    async def app():
        async with open_fake_client(server) as client:
            with pytest.raises(RpcError):
                await client.call_tool("mute")

    with pytest.raises(TypeError, match="returned None without answering"):
        await app()


# ------------------------------------------------------------ raw output


async def test_garbage_and_oversized_lines_go_through_the_real_framing(autojump_clock):
    server = FakeServer(tools=["big"])
    server.on_tool("big", lambda request: "x" * 5000)
    diagnostics = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(max_message_bytes=4096, on_log=diagnostics.append)
    ) as client:
        await server.send_raw(b"Server starting...\n")
        await server.send_message({"jsonrpc": "2.0", "id": 999, "result": {}})
        with pytest.raises(MessageTooLarge):
            await client.call_tool("big")
    assert any("not JSON" in line for line in diagnostics)
    assert any("unknown request id 999" in line for line in diagnostics)


async def test_send_raw_over_max_message_bytes_fails_its_request_in_the_real_framer(autojump_clock):
    server = FakeServer(tools=["big"])
    async with open_fake_client(server, options=trio_mcp.ClientOptions(max_message_bytes=4096)) as client:
        async with trio.open_nursery() as nursery:
            caught = []

            async def app():
                with pytest.raises(MessageTooLarge) as error:
                    await client.call_tool("big")
                caught.append(error.value)

            nursery.start_soon(app)
            request = await server.expect_request("tools/call", name="big")
            # One answer in three writes, over the limit: the client's framer
            # discards it as it streams in, and recovers the id from its head.
            answer = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % request.id
            await server.send_raw(answer)
            await server.send_raw(b"x" * 6000)
            await server.send_raw(b'"}]}}\n')
        (error,) = caught
        assert (error.size, error.limit) == (len(answer) + 6000 + len(b'"}]}}'), 4096)
        # Half a message, then the rest: the framer joins them into one line.
        server.on_tool("echo", lambda request: request.arguments["text"])
        assert (await client.call_tool("echo", {"text": "whole"})).text == "whole"


async def test_every_line_goes_through_the_real_stream_channel(autojump_clock):
    """What the session writes is what the fake reads, and what the fake writes is what the session reads."""
    server = FakeServer(era="legacy", tools=["count"])

    async def count(request):
        for step in (1, 2):
            await request.progress(step, 2)
        return "counted"

    server.on_tool("count", count)
    wire: list[tuple[str, bytes]] = []
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(on_wire=lambda direction, line: wire.append((direction, line)))
    ) as client:
        assert isinstance(client.session._channel, StreamChannel)
        assert (await client.call_tool("count", on_progress=lambda *args: None)).text == "counted"
        await server.send_raw(b"Server banner\n")
        await server.notify("notifications/tools/list_changed")
        await client.ping()
        # A half line stays in the client's framer until its end comes.
        await server.send_raw(b'{"jsonrpc":"2.0","method":"notifications/')
        await trio.sleep(1)
        await server.send_raw(b'message","params":{"level":"info","data":"joined"}}\n')
        await client.ping()
    written = [line for direction, line in wire if direction == "out"]
    read = [line for direction, line in wire if direction == "in"]
    assert all(line.endswith(b"\n") for line in written)
    assert [orjson.loads(line) for line in written] == server.received
    assert [m["method"] for m in server.received if "method" in m] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "ping",
        "ping",
    ]
    assert b"Server banner" in read
    decoded = [orjson.loads(line) for line in read if line != b"Server banner"]
    # Every answer of the fake, as the session read it, in order.
    assert [m for m in decoded if "method" not in m] == [request.response for request in server.requests]
    notes = [(m["method"], m.get("params")) for m in decoded if "method" in m]
    assert notes == [
        ("notifications/progress", {"progressToken": 1, "progress": 1, "total": 2}),
        ("notifications/progress", {"progressToken": 1, "progress": 2, "total": 2}),
        ("notifications/tools/list_changed", None),
        ("notifications/message", {"level": "info", "data": "joined"}),
    ]


# --------------------------------------------------------------- transport


async def test_open_fake_transport_then_open_fake_client(autojump_clock):
    server = FakeServer(era="legacy", tools=["a"], manual=True)
    async with open_fake_transport(server, options=trio_mcp.SessionOptions(request_timeout=5)) as transport:
        raw = await transport.request("ping")
        assert raw == {}
        # As a process's: the fake's "pid" of this connection.
        assert transport.statistics().pid == server.pid
    async with open_fake_client(server) as client:
        assert client.era == "legacy"
        assert [tool.name for tool in await client.list_tools()] == ["a"]
        assert isinstance(server.pid, int)
    assert re.fullmatch(r"<FakeServer 'fake-server' era=legacy not connected>", repr(server))


# ------------------------------------------------------------------ as a real server would


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_unscripted_names_are_answered_as_a_real_server_would(autojump_clock, era):
    # Fails without the fix: each of these calls waited forever for the test.
    server = FakeServer(era=era, tools=["known"], prompts=["hello"], resources=["file:///a"])
    async with open_fake_client(server) as client:
        start = trio.current_time()
        with pytest.raises(trio_mcp.RpcError) as tool:
            await client.call_tool("unknown", {})
        with pytest.raises(trio_mcp.RpcError) as prompt:
            await client.get_prompt("unknown")
        with pytest.raises(trio_mcp.RpcError) as resource:
            await client.read_resource("file:///nowhere")
        with pytest.raises(trio_mcp.RpcError) as method:
            await client.complete({"type": "ref/prompt", "name": "hello"}, ("arg", "v"))
        assert trio.current_time() == start  # answered, not timed out
    assert (tool.value.code, tool.value.message) == (-32602, "Unknown tool: unknown")
    assert (prompt.value.code, prompt.value.message) == (-32602, "Unknown prompt: unknown")
    assert resource.value.code == -32002
    assert method.value.code == -32601


async def test_manual_mode_leaves_every_unanswered_request_to_the_test(autojump_clock):
    server = FakeServer(manual=True)
    async with open_fake_client(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "unknown", {})
        request = await server.expect_request("tools/call", name="unknown")
        await request.respond({"content": []})


async def test_receive_request_fails_the_test_instead_of_hanging(autojump_clock):
    # Fails without the fix: it waited forever (under autojump, at 100% CPU).
    server = FakeServer(tools=["a"])
    server.on_tool("a", lambda request: "done")
    async with open_fake_client(server) as client:
        await client.call_tool("a", {})
        start = trio.current_time()
        with pytest.raises(AssertionError, match="no request came for the test within 60 s"):
            await server.receive_request()
        assert trio.current_time() - start == 60
    quick = FakeServer(receive_timeout=2)
    async with open_fake_client(quick):
        start = trio.current_time()
        with pytest.raises(AssertionError, match="within 2 s"):
            await quick.receive_request()
        assert trio.current_time() - start == 2


async def test_listen_is_acknowledged_and_one_call_announces_a_change_in_the_modern_era(autojump_clock):
    # Fails without the fix: the listen waited for the test to acknowledge
    # it, and there was no list_changed().
    server = FakeServer(era="modern", tools=["a"])
    async with open_fake_client(server) as client:
        async with client.listen(tools=True) as notes:
            await server.list_changed("prompts")  # not asked for: nothing sent
            await server.list_changed("tools", ["b", "c"])  # bare names, as the constructor takes
            async for note in notes:
                assert note["method"] == "notifications/tools/list_changed"
                break
            assert [tool.name for tool in await client.list_tools()] == ["b", "c"]
        assert [tool.name for tool in await client.list_tools()] == ["b", "c"]


async def test_one_call_announces_a_change_in_the_legacy_era_too(autojump_clock):
    seen: list[str] = []
    server = FakeServer(era="legacy", tools=["a"], resources=["file:///a"])
    async with open_fake_client(
        server, options=trio_mcp.ClientOptions(on_notification=lambda note: seen.append(note["method"]))
    ) as client:
        await server.list_changed("tools", ["z"])
        await server.resource_updated("file:///a")
        server.prompts = ["p"]  # assigned: bare names too
        assert [tool.name for tool in await client.list_tools()] == ["z"]
        assert [prompt.name for prompt in await client.list_prompts()] == ["p"]
    assert seen == ["notifications/tools/list_changed", "notifications/resources/updated"]


async def test_the_fake_connection_has_a_pid_and_a_stderr_tail(autojump_clock):
    server = FakeServer(tools=["a"])
    assert server.pid is None
    assert server.stderr_tail == ""
    async with open_fake_client(server) as client:
        first = server.pid
        assert isinstance(first, int)
        assert client.session.statistics().pid == first
        await server.write_stderr("warming up\nout of memory")
        assert server.stderr_tail == "warming up\nout of memory\n"
        await server.exit(3)
        with pytest.raises(trio_mcp.ServerGone) as caught:
            await client.call_tool("a", {})
    assert caught.value.pid == first
    assert server.pid is None
    assert "out of memory" in server.stderr_tail
    async with open_fake_client(server):
        assert server.pid not in (None, first)  # a new "process"


async def test_the_lists_come_in_pages_of_page_size(autojump_clock):
    server = FakeServer(tools=[f"t{i}" for i in range(5)], prompts=["p"], page_size=2)
    async with open_fake_client(server) as client:
        assert [tool.name for tool in await client.list_tools()] == [f"t{i}" for i in range(5)]
        assert [prompt.name for prompt in await client.list_prompts()] == ["p"]
    pages = [request for request in server.requests if request.method == "tools/list"]
    assert [request.params.get("cursor") for request in pages] == [None, "2", "4"]
    assert [len(request.response["result"]["tools"]) for request in pages] == [2, 2, 1]
    with pytest.raises(ValueError, match="page_size"):
        FakeServer(page_size=0)


async def test_a_death_on_the_probe_starts_the_fake_again_as_open_stdio_client_does(autojump_clock):
    # Fails without the fix: open_fake_client raised the ServerGone of the
    # probe, where open_stdio_client starts the server again and sends
    # initialize straight away (old servers that crash on unknown methods).
    server = FakeServer(era="legacy", tools=["a"])

    async def crash(request):
        await server.write_stderr(f"unknown method {request.method}")
        await server.exit(3)

    server.on_request("server/discover", crash)
    async with open_fake_client(server) as client:
        assert client.era == "legacy"
        assert [tool.name for tool in await client.list_tools()] == ["a"]
    assert [request.method for request in server.requests][:3] == [
        "server/discover",
        "initialize",
        "tools/list",
    ]
    # Dying again is the error, with the first death as `previous`.
    server.on_request("initialize", crash)
    with pytest.raises(trio_mcp.ServerGone) as caught:
        async with open_fake_client(server):
            pass
    assert caught.value.previous is not None
    assert "on the server/discover probe" in str(caught.value)


# ------------------------------------------------------------------ fuzzing an application


async def _forecast(client: trio_mcp.Client) -> str:
    """An application that must survive anything its server does."""
    with trio.move_on_after(5):
        try:
            result = await client.call_tool("forecast", {"city": "Paris"})
        except trio_mcp.MCPError:
            return "no forecast today"
        return result.text or "no forecast today"
    return "no forecast today"


def _survives(misbehaviour: Misbehaviour, era: str) -> str:
    async def main() -> str:
        server = FakeServer(era=era, tools=["forecast"])
        answers: list[str] = []
        async with open_fake_client(server, options=trio_mcp.ClientOptions(request_timeout=10)) as client:
            async with trio.open_nursery() as nursery:

                async def app() -> None:
                    answers.append(await _forecast(client))

                nursery.start_soon(app)
                request = await server.expect_request("tools/call", name="forecast")
                await misbehaviour.play(server, request)
        return answers[0]

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.property
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(misbehaviours(), st.sampled_from(["modern", "legacy"]))
def test_the_client_turns_any_hostile_answer_into_a_result_or_a_typed_error(misbehaviour, era):
    # Whatever the server does, the application gets a result or an
    # MCPError, within its own budget: never another exception, never a hang.
    answer = _survives(misbehaviour, era)
    assert isinstance(answer, str)


@pytest.mark.property
@given(malformed_lines(), odd_results("tools/list"))
def test_the_strategies_draw_what_they_say(line, result):
    assert line.endswith(b"\n")
    assert b"\n" not in line[:-1]
    json.dumps(result)  # any JSON value, encodable


async def test_a_fake_is_a_target_for_open_client_and_connect_client(autojump_clock):
    server = FakeServer(tools=["a"])
    server.on_tool("a", lambda request: "done")
    target = server.target()
    async with trio_mcp.open_client(target) as client:
        assert (await client.call_tool("a", {})).text == "done"
        first = client.pid
        assert first == server.pid
    async with trio.open_nursery() as nursery:
        client = await trio_mcp.connect_client(nursery, target)
        assert (await client.call_tool("a", {})).text == "done"
        assert client.pid not in (None, first)  # connected anew, as a process is started anew
        await client.aclose()
    server.on_tool("a", lambda request: 1 / 0)
    async with trio_mcp.open_client(target) as client:
        with pytest.raises(trio_mcp.RpcError):
            await client.call_tool("a", {})
    assert isinstance(server.handler_errors[0], ZeroDivisionError)


async def test_a_fakes_pids_can_never_name_a_real_process(autojump_clock):
    # Application code that kills a server by its pid, run against a fake,
    # must not signal some unrelated process of the machine running the test.
    server = FakeServer(tools=["a"])
    config = [trio_mcp.ServerSpec(name="weather", target=server.target())]
    seen = []
    async with trio_mcp.open_servers(config) as servers:
        for _ in range(3):
            await servers.wait_ready("weather")
            pid = servers.status("weather").pid
            assert pid is not None
            seen.append(pid)
            assert trio_mcp.testing.is_fake_pid(pid)
            # Above every system's largest pid (Linux's is 2**22), within a
            # pid_t, and odd (Windows's pids are multiples of four).
            assert 2**22 < pid < 2**31
            assert pid % 2 == 1
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)  # "no such process": the signal goes nowhere
            await server.exit(1)
            await servers.wait_until("weather", "restarting")
    assert len(set(seen)) == 3
    assert not trio_mcp.testing.is_fake_pid(os.getpid())


async def test_a_test_kills_a_fake_server_with_exit(autojump_clock):
    # How a test "kills -9" a fake entry: FakeServer.exit(signal=...).
    server = FakeServer(tools=["a"])
    config = [trio_mcp.ServerSpec(name="weather", target=server.target())]
    async with trio_mcp.open_servers(config, restart=trio_mcp.RestartPolicy(mode="never")) as servers:
        await servers.wait_ready("weather")
        await server.exit(signal=signal.SIGKILL)
        await servers.wait_until("weather", "failed")
        with pytest.raises(trio_mcp.ServerGone) as caught:
            await servers.call_tool("weather__a", {})
    assert caught.value.signal == signal.SIGKILL


# ------------------------------------------------------------- the openers' options


@pytest.mark.parametrize(
    ("opener", "kind"),
    [(open_fake_client, trio_mcp.ClientOptions), (open_fake_transport, trio_mcp.SessionOptions)],
    ids=["open_fake_client", "open_fake_transport"],
)
def test_a_fake_opener_takes_its_options_as_the_real_ones_do(opener, kind):
    # As the real openers: keyword-only, and an option given loose names its class.
    with pytest.raises(TypeError) as caught:
        opener(FakeServer(), request_timeout=5)
    assert str(caught.value) == (
        f"{opener.__name__}(): request_timeout is a {kind.__name__} field:"
        f" pass options={kind.__name__}(request_timeout=5)"
    )
    with pytest.raises(
        TypeError, match=rf"options are keyword-only, pass options={kind.__name__}\(\.\.\.\)$"
    ):
        opener(FakeServer(), kind())

"""The client's requests, against real processes of ``tests/servers/mcp_server.py``.

The 2026-07-28 ``_meta`` envelope, typed results (unknown fields and content
types kept), tool errors as results, JSON-RPC errors, pagination, caching by
``ttlMs``, progress, log routing, era-specific methods, and cancellation.
What the client wrote is read back through the server's ``lines`` tool.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``; no test
asserts speed.
"""

from __future__ import annotations

from contextlib import aclosing

import pytest
import trio
from client_support import (
    ALL_HOOK_CAPS,
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LIMIT,
    LOG_LEVEL,
    MODERN,
    PROTOCOL_VERSION,
    Collector,
    notifications,
    open_client,
    requests,
    responses,
    stats,
    tool_calls,
    wire,
)

import trio_mcp
import trio_mcp.types
from trio_mcp import NotSupported, ProtocolError, RequestTimeout, RpcError, ServerGone
from trio_mcp.types import (
    BlobResourceContents,
    ImageContent,
    TextContent,
    TextResourceContents,
    UnknownContent,
)

ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])
TOOL_COUNT = 24

INPUT_METHODS = {"tools/call", "prompts/get", "resources/read"}


async def no_hook(*args):
    raise AssertionError("no input request expected")


HOOKS = {"on_elicitation": no_hook, "on_sampling": no_hook, "on_roots": no_hook}


# --------------------------------------------------------------- envelope


async def exercise(client):
    """One request of each kind the client can send in the modern era."""
    await client.list_tools()
    await client.list_prompts()
    await client.list_resources()
    await client.list_resource_templates()
    await client.call_tool("echo", {"text": "x"})
    await client.get_prompt("greet", {"name": "Ann"})
    await client.read_resource("mem://a")
    await client.complete({"type": "ref/prompt", "name": "greet"}, ("name", "a"))
    await client.discover()
    await client.request("x/needs", {"cap": "sampling", "always": False}, for_input=True)


async def test_modern_envelope_on_every_request():
    """Every request carries version, capabilities and client info; capabilities only where input may be asked."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **HOOKS) as client:
            await exercise(client)
            sent = await wire(client)
    methods = set()
    for message in requests(sent):
        meta = message["params"]["_meta"]
        methods.add(message["method"])
        assert meta[PROTOCOL_VERSION] == MODERN
        assert meta[CLIENT_INFO] == {"name": "trio-mcp", "version": trio_mcp.__version__}
        assert LOG_LEVEL not in meta
        assert "progressToken" not in meta
        if message["method"] in INPUT_METHODS:
            assert meta[CLIENT_CAPABILITIES] == ALL_HOOK_CAPS, message
        elif message["method"] == "x/needs":
            assert meta[CLIENT_CAPABILITIES] == ALL_HOOK_CAPS  # for_input=True
        else:
            assert meta[CLIENT_CAPABILITIES] == {}, message
    assert methods >= {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "completion/complete",
    }


async def test_modern_envelope_without_hooks_declares_nothing():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            await client.call_tool("echo", {"text": "x"})
            await client.read_resource("mem://a")
            sent = await wire(client)
    for message in requests(sent):
        assert message["params"]["_meta"][CLIENT_CAPABILITIES] == {}


async def test_modern_envelope_only_some_hooks():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_sampling=no_hook) as client:
            await client.call_tool("echo", {"text": "x"})
            sent = await wire(client)
    (call,) = tool_calls(sent, "echo")
    assert call["params"]["_meta"][CLIENT_CAPABILITIES] == {"sampling": {}}


async def test_modern_envelope_extra_meta_log_level_and_client_info():
    """``meta`` adds keys, ``log_level`` adds ``logLevel`` everywhere, ``client_info`` is sent as given."""
    info = trio_mcp.types.Implementation(name="tester", version="9.9", title="The Tester")
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", client_info=info, log_level="warning") as client:
            await client.call_tool(
                "echo",
                {"text": "x"},
                meta={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"},
            )
            await client.list_tools()
            sent = await wire(client)
    probe, *rest = requests(sent)
    assert probe["method"] == "server/discover"
    for message in requests(sent):
        meta = message["params"]["_meta"]
        assert meta[CLIENT_INFO] == {"name": "tester", "version": "9.9", "title": "The Tester"}
    # The probe asks for no logs (nothing can be logged for it); every later request does.
    assert LOG_LEVEL not in probe["params"]["_meta"]
    assert [m["params"]["_meta"][LOG_LEVEL] for m in rest] == ["warning"] * len(rest)
    (call,) = tool_calls(sent, "echo")
    assert call["params"]["_meta"]["traceparent"].startswith("00-0af7")
    assert call["params"]["arguments"] == {"text": "x"}


async def test_legacy_requests_carry_no_modern_envelope():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", **HOOKS, log_level="debug") as client:
            await client.call_tool("echo", {"text": "x"})
            await client.call_tool("add", {"a": 1, "b": 1}, meta={"com.example/trace": "t1"})
            await client.list_tools()
            sent = await wire(client)
    (add,) = tool_calls(sent, "add")
    assert add["params"]["_meta"] == {"com.example/trace": "t1"}
    (echo,) = tool_calls(sent, "echo")
    assert "_meta" not in echo["params"]
    for message in requests(sent):
        if message["method"] in ("server/discover",):
            continue
        meta = (message.get("params") or {}).get("_meta", {})
        assert PROTOCOL_VERSION not in meta
        assert CLIENT_CAPABILITIES not in meta


# ---------------------------------------------------------- typed results


@ERAS
async def test_typed_results_keep_unknown_fields_and_content_types(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            result = await client.call_tool("odd")
    text, odd, image = result.content
    assert isinstance(text, TextContent)
    assert text.text == "plain"
    assert text.extra == {"x-block": 1}
    assert isinstance(odd, UnknownContent)
    assert odd.type == "hologram"
    assert odd.raw["payload"] == {"depth": 3}
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert result.structured_content == {"n": 1}
    assert result.is_error is False
    assert result.extra == {"x-top": {"kept": True}}
    assert "resultType" not in result.extra


@ERAS
async def test_tools_are_typed(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
    assert len(tools) == TOOL_COUNT
    assert tools["echo"].display_name == "Echo"
    assert tools["echo"].input_schema["required"] == ["text"]
    assert tools["add"].display_name == "Adder"
    assert tools["add"].annotations is not None
    assert tools["add"].annotations.read_only_hint is True
    assert tools["add"].extra == {"x-vendor": {"kept": True}}
    assert tools["fail"].display_name == "fail"


@ERAS
async def test_tool_error_is_a_result(era):
    """``isError`` is the tool failing, not the protocol: a result."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            result = await client.call_tool("fail")
            assert result.is_error is True
            assert result.text == "boom"
            ok = await client.call_tool("add", {"a": 1, "b": 2})
    assert ok.is_error is False
    assert ok.text == "3"
    assert ok.structured_content == {"sum": 3}


@ERAS
async def test_rpc_errors_and_the_connection_keeps_working(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            with pytest.raises(RpcError) as unknown_tool:
                await client.call_tool("no-such-tool")
            with pytest.raises(RpcError) as unknown_method:
                await client.request("no/such/method")
            with pytest.raises(RpcError) as bad_prompt:
                await client.get_prompt("greet")
            assert (await client.call_tool("echo", {"text": "alive"})).text == "alive"
    assert unknown_tool.value.code == -32602
    assert "no-such-tool" in unknown_tool.value.message
    assert unknown_method.value.code == -32601
    assert bad_prompt.value.code == -32602


@ERAS
async def test_raw_request_returns_the_result_dict(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            result = await client.request("tools/call", {"name": "echo", "arguments": {"text": "raw"}})
    assert result["content"] == [{"type": "text", "text": "raw"}]
    if era == "modern":
        assert result["resultType"] == "complete"


@ERAS
async def test_prompts_and_resources(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            prompt = await client.get_prompt("greet", {"name": "Ann"})
            text = await client.read_resource("mem://a")
            blob = await client.read_resource("mem://blob")
            folder = await client.read_resource("mem://dir")
    assert prompt.description == "a greeting"
    assert prompt.messages[0].role == "user"
    assert prompt.messages[0].content.text == "Hello Ann"
    (content,) = text.contents
    assert isinstance(content, TextResourceContents)
    assert (content.uri, content.text, content.mime_type) == ("mem://a", "alpha", "text/plain")
    (content,) = blob.contents
    assert isinstance(content, BlobResourceContents)
    assert content.blob == "AAH/"
    assert [c.text for c in folder.contents] == ["one", "two"]


@pytest.mark.parametrize(("era", "code"), [("modern", -32602), ("legacy", -32002)])
async def test_resource_not_found(era, code):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            with pytest.raises(RpcError) as caught:
                await client.read_resource("mem://missing")
    assert caught.value.code == code
    assert caught.value.data == {"uri": "mem://missing"}


@ERAS
async def test_completion(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            by_dict = await client.complete(
                {"type": "ref/prompt", "name": "greet"}, ("name", "al"), {"x": "y"}
            )
            (greet,) = [p for p in await client.list_prompts() if p.name == "greet"]
            by_prompt = await client.complete(greet, {"name": "name", "value": "b"})
            (template, *_) = await client.list_resource_templates()
            await client.complete(template, ("id", ""))
            sent = await wire(client)
    assert by_dict.values == ["alice", "alfred", "albert"]
    assert by_dict.total == 3
    assert by_dict.has_more is False
    assert by_prompt.values == ["bob"]
    first, second, third = requests(sent, "completion/complete")
    assert first["params"]["ref"] == {"type": "ref/prompt", "name": "greet"}
    assert first["params"]["argument"] == {"name": "name", "value": "al"}
    assert first["params"]["context"] == {"arguments": {"x": "y"}}
    assert second["params"]["ref"] == {"type": "ref/prompt", "name": "greet"}
    assert "context" not in second["params"]
    assert third["params"]["ref"] == {"type": "ref/resource", "uri": "mem://items/{id}"}


async def test_input_required_on_completion_is_a_protocol_error():
    """Only tools/call, prompts/get and resources/read may answer ``input_required``."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            with pytest.raises(ProtocolError):
                await client.complete({"type": "ref/prompt", "name": "input"}, ("a", "b"))
            assert (await client.call_tool("echo", {"text": "fine"})).text == "fine"


# ------------------------------------------------------------- pagination


@ERAS
async def test_lists_follow_every_page(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--page-size", "2") as client:
            tools = await client.list_tools()
            prompts = await client.list_prompts()
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            sent = await wire(client)
    assert len(tools) == TOOL_COUNT
    assert len({t.name for t in tools}) == TOOL_COUNT
    assert tools[0].name == "echo"
    assert [p.name for p in prompts] == ["greet", "mrtr", "p3", "p4", "p5"]
    assert [r.uri for r in resources] == ["mem://a", "mem://blob", "mem://dir", "mem://ask", "mem://e"]
    assert [t.uri_template for t in templates] == ["mem://items/{id}", "mem://users/{name}", "mem://x/{y}"]
    pages = requests(sent, "tools/list")
    assert len(pages) == 12
    assert "cursor" not in pages[0]["params"]
    assert [p["params"]["cursor"] for p in pages[1:]] == [f"c{k}" for k in range(1, 12)]
    assert len(requests(sent, "resources/templates/list")) == 2


@ERAS
async def test_one_page_at_a_time(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--page-size", "2") as client:
            first = await client.list_tools_page()
            second = await client.list_tools_page(first.next_cursor)
            prompts = await client.list_prompts_page()
            resources = await client.list_resources_page("c2")
            templates = await client.list_resource_templates_page("c1")
            with pytest.raises(RpcError) as caught:
                await client.list_tools_page("bogus")
    assert [t.name for t in first.tools] == ["echo", "add"]
    assert first.next_cursor == "c1"
    assert [t.name for t in second.tools] == ["fail", "odd"]
    assert second.next_cursor == "c2"
    assert [p.name for p in prompts.prompts] == ["greet", "mrtr"]
    assert [r.uri for r in resources.resources] == ["mem://e"]
    assert resources.next_cursor is None
    assert [t.name for t in templates.resource_templates] == ["x"]
    assert templates.next_cursor is None
    assert caught.value.code == -32602
    if era == "modern":
        assert first.cache_scope == "public"
        assert first.ttl_ms == 0
        assert first.extra.get("calls") == 1


@ERAS
async def test_iterators_fetch_pages_lazily(era):
    """``iter_*`` fetch a page when it is needed; leaving early leaves nothing behind."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--page-size", "2") as client:
            names = []
            async with aclosing(client.iter_tools()) as tools:
                async for tool in tools:
                    names.append(tool.name)
                    if len(names) == 3:
                        break
            # A plain ``break`` leaves nothing open either.
            async for tool in client.iter_tools():
                if tool.name == "add":
                    break
            prompts = [p.name async for p in client.iter_prompts()]
            resources = [r.uri async for r in client.iter_resources()]
            templates = [t.name async for t in client.iter_resource_templates()]
            counted = await stats(client)
    assert names == ["echo", "add", "fail"]
    assert counted["tools/list"] == 3
    assert prompts == ["greet", "mrtr", "p3", "p4", "p5"]
    assert len(resources) == 5
    assert templates == ["items", "users", "x"]


@ERAS
async def test_empty_string_cursor_is_a_cursor(era):
    """``nextCursor: ""`` means more pages (edge 34)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--page-size", "10", "--empty-cursor") as client:
            first = await client.list_tools_page()
            tools = await client.list_tools()
            sent = await wire(client)
    assert first.next_cursor == ""
    assert len(tools) == TOOL_COUNT
    pages = requests(sent, "tools/list")[1:]
    assert "cursor" not in pages[0]["params"]
    assert [p["params"]["cursor"] for p in pages[1:]] == ["", "c2"]


async def drain(iterator, into):
    """Append every item's name to ``into`` until the iterator ends or raises."""
    while True:
        try:
            item = await anext(iterator)
        except StopAsyncIteration:
            return
        into.append(item.name)


@ERAS
async def test_cursor_loop_is_a_protocol_error(era):
    """The same cursor twice is a loop: ProtocolError, not an endless list (edge 34)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, "--page-size", "2", "--cursor-loop") as client:
            with pytest.raises(ProtocolError, match="loop"):
                await client.list_tools()
            seen = []
            with pytest.raises(ProtocolError):
                await drain(client.iter_tools(), seen)
            assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
    # The first page at least, and no more than the two pages fetched.
    assert seen in (["echo", "add"], ["echo", "add", "fail", "odd"])


# ---------------------------------------------------------------- caching


async def test_cache_serves_fresh_results():
    """With ``ttlMs``, lists, reads and discover are served from the cache while fresh."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--ttl", "60000") as client:
            first = await client.list_tools()
            again = await client.list_tools()
            await client.list_prompts()
            await client.list_prompts()
            await client.list_resources()
            await client.list_resources()
            await client.list_resource_templates()
            await client.list_resource_templates()
            read = await client.read_resource("mem://a")
            await client.read_resource("mem://a")
            await client.read_resource("mem://blob")
            found = await client.discover()
            counted = await stats(client)
    assert first == again
    assert read.ttl_ms == 60000
    assert found.ttl_ms == 60000
    assert counted["tools/list"] == 1
    assert counted["prompts/list"] == 1
    assert counted["resources/list"] == 1
    assert counted["resources/templates/list"] == 1
    assert counted["server/discover"] == 1
    assert counted["reads"] == {"mem://a": 1, "mem://blob": 1}


async def test_cache_keys_pages_by_cursor():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--ttl", "60000", "--page-size", "10") as client:
            assert len(await client.list_tools()) == TOOL_COUNT
            assert len(await client.list_tools()) == TOOL_COUNT
            page = await client.list_tools_page("c1")
            counted = await stats(client)
    assert page.tools[0].name == "ask"
    assert counted["tools/list"] == 3


async def _assert_nothing_cached(*flags: str, **options: object) -> None:
    """A list, a read and discover, each asked twice of a modern server: every one reaches it."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", *flags, **options) as client:
            await client.list_tools()
            await client.list_tools()
            await client.read_resource("mem://a")
            await client.read_resource("mem://a")
            await client.discover()
            counted = await stats(client)
    assert counted["tools/list"] == 2
    assert counted["reads"] == {"mem://a": 2}
    assert counted["server/discover"] == 2


@pytest.mark.parametrize("flags", [("--ttl", "0"), ("--ttl", "-5")])
async def test_no_cache_without_ttl(flags):
    await _assert_nothing_cached(*flags)


async def test_cache_off():
    await _assert_nothing_cached("--ttl", "60000", cache=False)


async def test_invalidate_cache():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--ttl", "60000") as client:
            await client.list_tools()
            client.invalidate_cache()
            await client.list_tools()
            counted = await stats(client)
    assert counted["tools/list"] == 2


async def test_list_changed_on_a_listen_stream_invalidates():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--ttl", "60000") as client:
            async with client.listen(tools=True, resource_uris=["mem://"]) as sub:
                await client.list_tools()
                await client.read_resource("mem://a")
                await client.read_resource("mem://blob")
                await client.call_tool("touch", {"tools": True, "uri": "mem://a"})
                changed = await anext(sub)
                updated = await anext(sub)
                await client.list_tools()
                await client.list_tools()
                await client.read_resource("mem://a")
                await client.read_resource("mem://blob")
                counted = await stats(client)
    assert changed["method"] == "notifications/tools/list_changed"
    assert updated["method"] == "notifications/resources/updated"
    assert counted["tools/list"] == 2
    assert counted["reads"] == {"mem://a": 2, "mem://blob": 1}


async def test_stray_list_changed_invalidates_and_reaches_the_sink():
    """A list_changed without a subscription id: a global invalidation, for the sink (edge 28)."""
    seen = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", "--ttl", "60000", on_notification=seen.append) as client:
            async with client.listen(prompts=True) as sub:
                await client.list_tools()
                await client.call_tool("touch", {"stray": True})
                await seen.wait_until(lambda notes: "notifications/tools/list_changed" in notes.methods())
                await client.list_tools()
                counted = await stats(client)
                await client.call_tool("unlisten")
                assert [note async for note in sub] == []
    assert counted["tools/list"] == 2


async def test_legacy_results_are_not_cached():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", "--ttl", "60000") as client:
            await client.list_tools()
            await client.list_tools()
            await client.read_resource("mem://a")
            await client.read_resource("mem://a")
            counted = await stats(client)
    assert counted["tools/list"] == 2
    assert counted["reads"] == {"mem://a": 2}


# --------------------------------------------------------------- progress


@ERAS
async def test_progress_callbacks_sync_and_async(era):
    got_sync = []
    got_async = []

    async def on_progress_async(progress, total, message):
        await trio.lowlevel.checkpoint()
        got_async.append((progress, total, message))

    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            result = await client.call_tool(
                "slow", {"steps": 3}, on_progress=lambda *args: got_sync.append(args)
            )
            await client.call_tool("slow", {"steps": 2}, on_progress=on_progress_async)
            sent = await wire(client)
    assert result.text == "3 steps"
    assert got_sync == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert got_async == [(1, 2, "step 1"), (2, 2, "step 2")]
    first, second = tool_calls(sent, "slow")
    token1 = first["params"]["_meta"]["progressToken"]
    token2 = second["params"]["_meta"]["progressToken"]
    assert token1 != token2
    if era == "legacy":
        assert set(first["params"]["_meta"]) == {"progressToken"}


# -------------------------------------------------------------------- logs


async def test_modern_logs_name_no_call_so_they_go_to_the_client_sink():
    """A log message names no request: it goes to the client's on_notification, even while the
    call that caused it is alone in flight with a callback of its own."""
    got = Collector()
    per_call = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", log_level="info", on_notification=got.append) as client:
            result = await client.call_tool(
                "log", {"level": "warning", "message": "careful"}, on_notification=per_call.append
            )
            quiet = await client.call_tool(
                "log", {"level": "debug", "message": "noise"}, on_notification=per_call.append
            )
            await got.wait_until(lambda notes: len(notes) >= 1)
    assert result.text == "logged"
    assert quiet.text == "not logged"
    assert per_call == []
    (note,) = got
    assert note["method"] == "notifications/message"
    assert note["params"]["level"] == "warning"
    assert note["params"]["data"] == "careful"


async def test_modern_logs_without_a_call_callback_go_to_the_client_sink():
    got = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", log_level="debug", on_notification=got.append) as client:
            await client.call_tool("log", {"level": "info", "message": "to the sink"})
            await got.wait_until(lambda notes: len(notes) >= 1)
    assert got[0]["params"]["data"] == "to the sink"


async def test_modern_no_logs_without_log_level():
    got = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", on_notification=got.append) as client:
            result = await client.call_tool("log", {"level": "emergency"})
    assert result.text == "not logged"
    assert got == []


async def test_legacy_logs_and_set_logging_level():
    got = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", on_notification=got.append) as client:
            assert (await client.call_tool("log", {"level": "info", "message": "one"})).text == "logged"
            await got.wait_until(lambda notes: len(notes) >= 1)
            await client.set_logging_level("error")
            assert (await client.call_tool("log", {"level": "info"})).text == "not logged"
            per_call = Collector()
            await client.call_tool(
                "log", {"level": "error", "message": "two"}, on_notification=per_call.append
            )
            await got.wait_until(lambda notes: len(notes) >= 2)
            # A level MCP does not have is the caller's mistake: refused before it is sent.
            with pytest.raises(ValueError, match=r"level must be one of \['debug', .*not 'loud'"):
                await client.set_logging_level("loud")  # type: ignore[arg-type]
            sent = await wire(client)
    assert [n["params"]["data"] for n in got] == ["one", "two"]
    assert per_call == []
    (set_level,) = requests(sent, "logging/setLevel")
    assert set_level["params"] == {"level": "error"}


# ------------------------------------------------------- era-only methods


async def test_legacy_only_methods_are_not_supported_in_the_modern_era():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            for call in (
                client.ping(),
                client.set_logging_level("info"),
                client.subscribe_resource("mem://a"),
                client.unsubscribe_resource("mem://a"),
            ):
                with pytest.raises(NotSupported) as caught:
                    await call
                assert caught.value.era == "modern"
            sent = await wire(client)
    assert caught.value.method == "resources/unsubscribe"
    assert {m["method"] for m in requests(sent)} == {"server/discover", "tools/call"}


async def test_modern_only_methods_are_not_supported_in_the_legacy_era():
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy") as client:
            with pytest.raises(NotSupported) as caught:
                await client.discover()
            assert caught.value.method == "server/discover"
            assert caught.value.era == "legacy"
            with pytest.raises(NotSupported):
                await client.call_tool("ask", input_responses={"name": {"action": "decline"}})
            with pytest.raises(NotSupported):
                await client.call_tool("ask", request_state="x")
            sent = await wire(client)
    assert not requests(sent, "subscriptions/listen")
    assert len(requests(sent, "server/discover")) == 1


async def test_legacy_ping_subscribe_and_unsolicited_notifications():
    got = Collector()
    with trio.fail_after(LIMIT):
        async with open_client("--era", "legacy", on_notification=got.append) as client:
            await client.ping()
            await client.subscribe_resource("mem://a")
            assert (await client.call_tool("touch", {"uri": "mem://a", "tools": True})).text == "sent 2"
            await got.wait_until(lambda notes: len(notes) >= 2)
            await client.unsubscribe_resource("mem://a")
            assert (await client.call_tool("touch", {"uri": "mem://a"})).text == "sent 0"
            sent = await wire(client)
    assert sorted(got.methods()) == ["notifications/resources/updated", "notifications/tools/list_changed"]
    assert [n["params"] for n in got if n["method"] == "notifications/resources/updated"] == [
        {"uri": "mem://a"}
    ]
    assert requests(sent, "resources/subscribe")[0]["params"] == {"uri": "mem://a"}
    assert requests(sent, "resources/unsubscribe")[0]["params"] == {"uri": "mem://a"}
    assert len(requests(sent, "ping")) == 1


# ----------------------------------------------------------- cancellation


@ERAS
async def test_caller_cancellation_sends_cancelled_and_the_connection_keeps_working(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            with trio.CancelScope() as scope:
                # The server sends one progress notification once it has the request.
                await client.call_tool("hang", on_progress=lambda *_: scope.cancel())
            assert scope.cancelled_caught
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"
            sent = await wire(client)
    (hang,) = tool_calls(sent, "hang")
    cancels = notifications(sent, "notifications/cancelled")
    assert [c["params"]["requestId"] for c in cancels] == [hang["id"]]


@pytest.mark.slow
@ERAS
async def test_request_timeout_sends_cancelled(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era, request_timeout=1.0) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("hang")
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"
            sent = await wire(client)
    (hang,) = tool_calls(sent, "hang")
    cancels = notifications(sent, "notifications/cancelled")
    assert hang["id"] in [c["params"]["requestId"] for c in cancels]


@ERAS
async def test_server_exit_is_server_gone(era):
    with trio.fail_after(LIMIT):
        async with open_client("--era", era) as client:
            assert (await client.call_tool("exit", {"code": 0})).text == "bye"
            with pytest.raises(ServerGone):
                await client.call_tool("echo", {"text": "anyone?"})


# ------------------------------------------------------ modern violations


async def test_modern_server_request_is_ignored_not_answered():
    """A 2026-07-28 server sending a request is a violation: no answer, no hook call (edge 31)."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern", **HOOKS) as client:
            violating = (await client.call_tool("violate")).structured_content["id"]
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
            assert (await client.call_tool("echo", {"text": "y"})).text == "y"
            sent = await wire(client)
    assert [m for m in responses(sent) if m["id"] == violating] == []


async def test_modern_server_ping_is_not_answered():
    """Servers send no requests in the 2026-07-28 era, ``ping`` included; clients send no responses."""
    with trio.fail_after(LIMIT):
        async with open_client("--era", "modern") as client:
            violating = (await client.call_tool("violate_ping")).structured_content["id"]
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
            assert (await client.call_tool("echo", {"text": "y"})).text == "y"
            sent = await wire(client)
    assert [m for m in responses(sent) if m["id"] == violating] == []


class Oops(Exception):
    pass


async def use_and_fail(era, *, listen=False):
    async with open_client("--era", era) as client:
        await client.call_tool("echo", {"text": "x"})
        if listen:
            async with client.listen(tools=True):
                raise Oops
        raise Oops


@ERAS
async def test_errors_in_the_body_propagate_unwrapped(era):
    """The caller's own exception leaves the ``async with`` as itself, never in an ExceptionGroup."""
    with trio.fail_after(LIMIT):
        with pytest.raises(Oops):
            await use_and_fail(era)
        if era == "modern":
            with pytest.raises(Oops):
                await use_and_fail(era, listen=True)

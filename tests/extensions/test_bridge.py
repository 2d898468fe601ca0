"""The Trio app bridge (`trio_mcp.extensions.apps.open_app_bridge`), driven by a scripted view.

The view is a pair of Trio memory channels; the server is the in-memory fake
(the interop tests run the bridge against a real server).
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from view_support import ScriptedView

import trio_mcp
from trio_mcp.extensions.apps import AppServer, apps_extension, open_app_bridge
from trio_mcp.testing import FakeServer, open_fake_client

UI = {"ui": {"resourceUri": "ui://x/app"}}
TOOLS = [
    {"name": "show", "inputSchema": {"type": "object"}, "_meta": UI},
    {
        "name": "refresh",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {**UI["ui"], "visibility": ["app"]}},
    },
    {
        "name": "secret",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {**UI["ui"], "visibility": ["model"]}},
    },
    {"name": "slow", "inputSchema": {"type": "object"}},
]


class Slow:
    """The ``slow`` tool: never ends; says when it started and when it was cancelled."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = trio.Event()

    async def __call__(self, request: Any) -> str:
        self.started.set()
        try:
            await trio.sleep_forever()
        finally:
            self.cancelled.set()
        raise AssertionError("never")


def fake(slow: Slow | None = None) -> FakeServer:
    server = FakeServer(tools=TOOLS, resources=[])
    server.on_tool("refresh", lambda request: "refreshed")
    server.on_tool("show", lambda request: "shown")
    slow = slow or Slow()

    server.on_tool("slow", slow)
    server.on_request(
        "resources/read", lambda request: {"contents": [{"uri": request.params["uri"], "text": "<p>"}]}
    )
    return server


async def test_the_lifecycle_of_one_view(autojump_clock) -> None:
    server = fake()
    view = ScriptedView()
    got: dict[str, list[Any]] = {"message": [], "link": [], "context": [], "size": [], "log": []}

    def on_message(params: dict[str, Any]) -> None:
        got["message"].append(params)

    async def on_open_link(params: dict[str, Any]) -> bool:
        await trio.lowlevel.checkpoint()
        got["link"].append(params["url"])
        return params["url"].startswith("https://")

    options = trio_mcp.ClientOptions(extensions=[apps_extension()])
    async with open_fake_client(server, options=options) as client:
        async with open_app_bridge(
            view,
            AppServer(client),
            host_context={"theme": "dark", "availableDisplayModes": ["inline", "fullscreen"]},
            on_message=on_message,
            on_open_link=on_open_link,
            on_model_context=got["context"].append,
            on_size_change=got["size"].append,
            on_log=got["log"].append,
        ) as bridge:
            # Queued: nothing reaches the view before it is initialized.
            await bridge.send_tool_input({"city": "Paris"})
            answer = await view.initialize()
            result = answer["result"]
            assert result["hostInfo"]["name"] == "trio-mcp"
            assert result["hostContext"]["theme"] == "dark"
            assert set(result["hostCapabilities"]) == {
                "logging",
                "serverTools",
                "serverResources",
                "openLinks",
            }
            tool_input = await view.next()
            assert tool_input == {
                "jsonrpc": "2.0",
                "method": "ui/notifications/tool-input",
                "params": {"arguments": {"city": "Paris"}},
            }
            await bridge.wait_initialized()
            assert bridge.app_info == {"name": "view", "version": "1"}
            await bridge.send_tool_result(await client.call_tool("show"))
            pushed = await view.next()
            assert pushed["method"] == "ui/notifications/tool-result"
            assert pushed["params"]["content"] == [{"type": "text", "text": "shown"}]

            # Proxied to the server, under the visibility rule.
            called = await view.call("tools/call", {"name": "refresh", "arguments": {}})
            assert called["result"]["content"] == [{"type": "text", "text": "refreshed"}]
            refused = await view.call("tools/call", {"name": "secret"})
            assert refused["error"]["code"] == -32602
            assert "visibility lacks 'app'" in refused["error"]["message"]
            other = await view.call("tools/call", {"name": "elsewhere"})
            assert "does not list" in other["error"]["message"]
            listed = await view.call("tools/list")
            assert [tool["name"] for tool in listed["result"]["tools"]] == ["show", "refresh", "slow"]
            read = await view.call("resources/read", {"uri": "ui://x/app"})
            assert read["result"]["contents"][0]["text"] == "<p>"

            # To the host's callbacks.
            message = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
            assert (await view.call("ui/message", message))["result"] == {}
            assert (await view.call("ui/open-link", {"url": "https://example.com"}))["result"] == {}
            assert (await view.call("ui/open-link", {"url": "javascript:alert(1)"}))["result"] == {
                "isError": True
            }
            context = {"content": [{"type": "text", "text": "chose B"}]}
            assert (await view.call("ui/update-model-context", context))["result"] == {}
            assert bridge.model_context == context
            mode = await view.call("ui/request-display-mode", {"mode": "fullscreen"})
            assert mode["result"] == {"mode": "inline"}  # no on_display_mode: declined
            await view.notify("ui/notifications/size-changed", {"width": 300, "height": 200})
            await view.notify("notifications/message", {"level": "info", "data": "hi"})
            assert (await view.call("ping"))["result"] == {}
            await bridge.set_host_context(theme="dark")  # unchanged: nothing is sent
            await bridge.send_list_changed("tools")
            assert (await view.next())["method"] == "notifications/tools/list_changed"
            await bridge.set_host_context(theme="light")
            changed = await view.next()
            assert changed["method"] == "ui/notifications/host-context-changed"
            assert changed["params"] == {"theme": "light"}

            async def answer_teardown() -> None:
                teardown = await view.next()
                assert teardown["method"] == "ui/resource-teardown"
                await view._to_host_send.send({"jsonrpc": "2.0", "id": teardown["id"], "result": {}})

            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer_teardown)
                await bridge.teardown()
            assert bridge.closed
    assert got["message"] == [message]
    assert got["link"] == ["https://example.com", "javascript:alert(1)"]
    assert got["context"] == [context]
    assert got["size"] == [{"width": 300, "height": 200}]
    assert got["log"] == [{"level": "info", "data": "hi"}]
    calls = [request.name for request in server.requests if request.method == "tools/call"]
    assert calls == ["show", "refresh"]


async def test_a_view_that_cancels_its_call_withdraws_it_from_the_server(autojump_clock) -> None:
    slow = Slow()
    server = fake(slow)
    view = ScriptedView()
    async with (
        open_fake_client(server) as client,
        open_app_bridge(view, AppServer(client), teardown_timeout=1),
    ):
        await view.initialize()
        sent = await view.request("tools/call", {"name": "slow"})
        with trio.fail_after(5):
            await slow.started.wait()
            await view.notify("notifications/cancelled", {"requestId": sent})
            # The bridge cancels its call, which withdraws it from the server.
            await slow.cancelled.wait()
        assert any(message.get("method") == "notifications/cancelled" for message in server.received)
        # And the view is never answered for it: the next answer is its ping's.
        assert (await view.call("ping"))["result"] == {}


async def test_leaving_the_block_tears_the_view_down_within_its_budget(autojump_clock) -> None:
    slow = Slow()
    server = fake(slow)
    view = ScriptedView()
    async with open_fake_client(server) as client:
        start = trio.current_time()
        async with open_app_bridge(view, AppServer(client), teardown_timeout=3) as bridge:
            await view.initialize()
            await view.request("tools/call", {"name": "slow"})
            with trio.fail_after(5):
                await slow.started.wait()
        # The view never answered the teardown: three seconds, then closed; the slow call was ended.
        assert trio.current_time() - start == pytest.approx(3, abs=0.1)
        assert bridge.closed
        assert slow.cancelled.is_set()
        teardown = await view.next()
        assert teardown["method"] == "ui/resource-teardown"


async def test_a_view_that_goes_away_closes_the_bridge(autojump_clock) -> None:
    view = ScriptedView()
    async with open_app_bridge(view) as bridge:
        answer = await view.initialize()
        assert "serverTools" not in answer["result"]["hostCapabilities"]
        refused = await view.call("tools/call", {"name": "x"})
        assert refused["error"]["code"] == -32601
        view.gone()
        await bridge.wait_initialized()
        with trio.fail_after(5):
            await bridge.wait_closed()
    with pytest.raises(RuntimeError, match="torn down"):
        await bridge.send_tool_input({})


async def test_a_host_callback_that_fails_answers_the_view_with_an_error(autojump_clock) -> None:
    view = ScriptedView()

    def broken(params: dict[str, Any]) -> None:
        raise KeyError("oops")

    async with open_app_bridge(view, on_message=broken, teardown_timeout=0):
        await view.initialize()
        failed = await view.call("ui/message", {"role": "user", "content": []})
        assert failed["error"]["code"] == -32603
        no_link = await view.call("ui/open-link", {"url": "https://x"})
        assert no_link["error"]["code"] == -32601

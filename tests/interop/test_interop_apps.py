"""MCP Apps, host side, against a real server: the official Python SDK's ``mcp.server.apps``.

The server is ``servers/apps_server.py``; each test runs in both eras (the
client pinned to 2026-07-28, then to the initialize era).
"""

from __future__ import annotations

import json

import pytest
import trio
from view_support import ScriptedView

import trio_mcp
from trio_mcp import ServerSpec, open_servers
from trio_mcp.extensions.apps import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    AppCallRefused,
    AppServer,
    Csp,
    Permissions,
    ToolUi,
    UIResourceError,
    apps_extension,
    fetch_app,
    model_tools,
    open_app_bridge,
    tool_ui,
)

TIMEOUT = 60
ERAS = pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])


@ERAS
async def test_the_server_sees_the_extension_declared(apps_server, protocol: str) -> None:
    sent: list[dict] = []

    def tap(direction: str, line: bytes) -> None:
        if direction == "out":
            sent.append(json.loads(line))

    with trio.fail_after(TIMEOUT):
        async with apps_server.client(
            protocol=protocol, extensions=[apps_extension()], on_wire=tap
        ) as client:
            assert client.protocol_version == protocol
            await client.list_tools()
            assert (await client.call_tool("apps_supported")).text == "yes"
        async with apps_server.client(protocol=protocol) as client:
            assert (await client.call_tool("apps_supported")).text == "no"
    wanted = {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}
    if protocol == "2026-07-28":
        listing = next(message for message in sent if message.get("method") == "tools/list")
        caps = listing["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert caps["extensions"] == wanted
    else:
        initialize = next(message for message in sent if message.get("method") == "initialize")
        assert initialize["params"]["capabilities"]["extensions"] == wanted


@ERAS
async def test_typed_tool_ui_and_visibility(apps_server, protocol: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with apps_server.client(protocol=protocol, extensions=[apps_extension()]) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            shown = await model_tools(client)
    assert tool_ui(tools["show_clock"]) == ToolUi("ui://clock/app.html")
    assert tool_ui(tools["refresh_clock"]) == ToolUi("ui://clock/app.html", ("app",))
    assert tool_ui(tools["model_clock"]) == ToolUi("ui://clock/app.html", ("model",))
    assert tool_ui(tools["legacy_key"]) == ToolUi("ui://clock/app.html", deprecated_key=True)
    assert tool_ui(tools["plain"]) is None
    with pytest.raises(UIResourceError, match="not a ui:// URI"):
        tool_ui(tools["web_page"])
    names = [tool.name for tool in shown]
    assert "refresh_clock" not in names
    assert {"show_clock", "model_clock", "plain", "legacy_key"} <= set(names)
    assert len(names) == len(tools) - 1


@ERAS
async def test_fetching_a_tools_app(apps_server, protocol: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with apps_server.client(protocol=protocol, extensions=[apps_extension()]) as client:
            app = await fetch_app(client, "show_clock")
            same = await fetch_app(client, "legacy_key")
            with pytest.raises(UIResourceError, match="'text/html', not 'text/html;profile=mcp-app'"):
                await fetch_app(client, "not_html")
            with pytest.raises(UIResourceError, match="not a ui:// URI"):
                await fetch_app(client, "web_page")
            with pytest.raises(UIResourceError, match="has no UI resource"):
                await fetch_app(client, "plain")
            with pytest.raises(trio_mcp.UnknownName):
                await fetch_app(client, "no_such_tool")
    assert app.uri == "ui://clock/app.html"
    assert app.mime_type == APP_MIME_TYPE
    assert 'id="refresh"' in app.html
    assert app.tool is not None
    assert app.tool.name == "show_clock"
    assert app.meta.csp == Csp(
        connect_domains=("wss://time.example.com", "*"), resource_domains=("https://cdn.example.com",)
    )
    assert app.meta.permissions == Permissions(camera=True, clipboard_write=True)
    assert app.meta.domain == "clock.example-content.com"
    assert app.meta.prefers_border is True
    # The bare "*" is refused, never copied into the policy.
    assert app.refused_sources == ("*",)
    directives = dict(part.strip().split(" ", 1) for part in app.csp.split(";"))
    assert directives["connect-src"] == "wss://time.example.com"
    assert directives["script-src"] == "'self' 'unsafe-inline' https://cdn.example.com"
    assert directives["default-src"] == "'none'"
    assert directives["frame-src"] == "'none'"
    assert app.allow == "camera; clipboard-write"
    assert same.html == app.html


@ERAS
async def test_a_view_may_call_only_its_servers_app_tools(apps_server, protocol: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with apps_server.client(protocol=protocol, extensions=[apps_extension()]) as client:
            view = AppServer(client)
            assert (await view.call_tool("refresh_clock")).text.startswith("refreshed at ")
            assert (await view.call_tool("show_clock")).is_error is False
            with pytest.raises(AppCallRefused, match="visibility lacks 'app'") as refused:
                await view.call_tool("model_clock")
            assert refused.value.tool == "model_clock"
            with pytest.raises(AppCallRefused, match="does not list") as other:
                await view.call_tool("echo")
            assert other.value.reason == "not a tool of this server"
            names = [tool.name for tool in await view.list_tools()]
            assert "model_clock" not in names
            assert "refresh_clock" in names
            read = await view.read_resource("ui://clock/app.html")
            assert read.contents[0].uri == "ui://clock/app.html"


async def test_the_groups_catalogue_never_offers_an_app_only_tool(apps_server, sdk_server) -> None:
    config = [
        ServerSpec(name="apps", command=apps_server.command, args=apps_server.args, env=apps_server.env),
        ServerSpec(name="sdk", command=sdk_server.command, args=sdk_server.args, env=sdk_server.env),
    ]
    options = trio_mcp.ClientOptions(extensions=[apps_extension()])
    with trio.fail_after(TIMEOUT):
        async with open_servers(config, options=options) as servers:
            listed = {(entry.server, entry.item.name): entry.name for entry in servers.tools}
            assert ("apps", "show_clock") in listed
            assert ("apps", "model_clock") in listed
            assert ("apps", "refresh_clock") not in listed
            assert ("sdk", "echo") in listed
            with pytest.raises(trio_mcp.UnknownName):
                await servers.call_tool("apps__refresh_clock")
            # The server's own client still reaches it, for the view.
            view = AppServer(await servers.client("apps"))
            assert (await view.call_tool("refresh_clock")).text.startswith("refreshed at ")
            # A view of one server never reaches another's tools.
            with pytest.raises(AppCallRefused):
                await view.call_tool("echo")


@ERAS
async def test_the_app_bridge_proxies_a_views_calls_to_the_real_server(apps_server, protocol: str) -> None:
    view = ScriptedView()
    with trio.fail_after(TIMEOUT):
        async with (
            apps_server.client(protocol=protocol, extensions=[apps_extension()]) as client,
            open_app_bridge(view, AppServer(client), teardown_timeout=2) as bridge,
        ):
            app = await fetch_app(client, "show_clock")
            assert app.tool is not None
            await bridge.send_tool_input({})
            answer = await view.initialize()
            assert answer["result"]["protocolVersion"] == "2026-01-26"
            assert (await view.next())["method"] == "ui/notifications/tool-input"
            await bridge.send_tool_result(await client.call_tool("show_clock"))
            assert (await view.next())["method"] == "ui/notifications/tool-result"
            refreshed = await view.call("tools/call", {"name": "refresh_clock", "arguments": {}})
            assert refreshed["result"]["content"][0]["text"].startswith("refreshed at ")
            refused = await view.call("tools/call", {"name": "model_clock", "arguments": {}})
            assert "visibility lacks 'app'" in refused["error"]["message"]
            read = await view.call("resources/read", {"uri": app.uri})
            assert read["result"]["contents"][0]["mimeType"] == APP_MIME_TYPE
            listed = [tool["name"] for tool in (await view.call("tools/list"))["result"]["tools"]]
            assert "refresh_clock" in listed
            assert "model_clock" not in listed


async def test_ext_apps_own_example_server(ext_apps_server) -> None:
    # ext-apps' basic example, on the TypeScript SDK (initialize era): both keys for its view, the new one wins.
    with trio.fail_after(TIMEOUT):
        async with ext_apps_server.client(extensions=[apps_extension()]) as client:
            assert client.era == "legacy"
            [tool] = await client.list_tools()
            ui = tool_ui(tool)
            assert ui == ToolUi("ui://get-time/mcp-app.html")
            assert tool.meta is not None
            assert tool.meta["ui/resourceUri"] == "ui://get-time/mcp-app.html"
            app = await fetch_app(client, tool)
            assert app.mime_type == APP_MIME_TYPE
            assert 'id="get-time-btn"' in app.html
            # It declares no origins: the restrictive default.
            assert app.meta.csp is None
            assert "connect-src 'none'" in app.csp
            assert [t.name for t in await model_tools(client)] == ["get-time"]
            result = await AppServer(client).call_tool("get-time")
            assert result.structured_content is not None
            assert result.structured_content["time"].startswith("20")

"""A small Trio host for MCP Apps: one tool's app, served to a browser over a websocket.

    python apps_host.py --tool show_clock -- python apps_server.py

It starts the MCP server given after ``--``, calls the tool, fetches its app,
and serves one page on http://127.0.0.1 (the port is printed): the page
holds the app in a sandboxed frame, with the Content-Security-Policy the
host built from the app's declared origins, and relays the frame's messages
to the host over a websocket, where an app bridge answers them. A button in
the app that calls a tool goes through the bridge, which lets it call only
the tools of that server meant for views.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from typing import Any

import h11
import trio
from trio_websocket import ConnectionClosed, WebSocketRequest, serve_websocket

import trio_mcp
from trio_mcp.extensions.apps import AppResource, AppServer, apps_extension, fetch_app, open_app_bridge

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="margin:0">
<iframe id="app" sandbox="allow-scripts" allow="{allow}"
        style="border:0;position:absolute;left:0;top:0;width:640px;height:400px"></iframe>
<script>
// Relay: the frame's messages to the host's websocket, and back.
const frame = document.getElementById("app");
const socket = new WebSocket("ws://127.0.0.1:{ws_port}/");
const early = [];
window.addEventListener("message", (event) => {{
  if (event.source !== frame.contentWindow) return;
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event.data));
  else early.push(event.data);
}});
socket.onopen = () => {{ for (const message of early.splice(0)) socket.send(JSON.stringify(message)); }};
socket.onmessage = (event) => frame.contentWindow.postMessage(JSON.parse(event.data), "*");
frame.srcdoc = {app};
</script>
</body></html>
"""


def with_policy(app: AppResource) -> str:
    """The app's HTML with its Content-Security-Policy first in its head."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(app.csp)}">'
    head = re.search(r"<head[^>]*>", app.html, re.IGNORECASE)
    if head is None:
        return meta + app.html
    return app.html[: head.end()] + meta + app.html[head.end() :]


class WebSocketView:
    """The view's channel (`trio_mcp.extensions.apps.ViewChannel`) over a websocket."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self.socket.send_message(json.dumps(message))
        except ConnectionClosed:
            raise trio.BrokenResourceError("the view went away") from None

    async def receive(self) -> object:
        try:
            text = await self.socket.get_message()
        except ConnectionClosed:
            raise trio.EndOfChannel from None
        try:
            return json.loads(text)
        except ValueError:
            return None  # The bridge ignores what is not JSON-RPC.


async def serve_page(stream: trio.SocketStream, page: bytes) -> None:
    """Answer one HTTP request with the page (h11, one request a connection)."""
    connection = h11.Connection(h11.SERVER)
    with trio.move_on_after(10):
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await stream.receive_some(65536))
                continue
            if isinstance(event, h11.Request):
                headers = [("content-type", "text/html; charset=utf-8"), ("content-length", str(len(page)))]
                headers.append(("connection", "close"))
                data = connection.send(h11.Response(status_code=200, headers=headers))
                data += connection.send(h11.Data(data=page))
                data += connection.send(h11.EndOfMessage())
                await stream.send_all(data)
            break
    await stream.aclose()


async def main(command: list[str], tool: str) -> None:
    options = trio_mcp.ClientOptions(extensions=[apps_extension()])
    async with trio_mcp.open_stdio_client(command[0], command[1:], options=options) as client:
        app = await fetch_app(client, tool)
        for source in app.refused_sources:
            print(f"refused CSP source {source!r}", flush=True)
        result = await client.call_tool(tool)

        async def view(request: WebSocketRequest) -> None:
            socket = await request.accept()
            async with open_app_bridge(
                WebSocketView(socket),
                AppServer(client),
                host_context={"theme": "light", "displayMode": "inline"},
                on_log=lambda params: print(f"view: {params.get('data')}", flush=True),
            ) as bridge:
                await bridge.send_tool_input({})
                await bridge.send_tool_result(result)
                await bridge.wait_initialized()
                info = bridge.app_info or {}
                print(f"view initialized: {info.get('name')} {info.get('version')}", flush=True)
                await bridge.wait_closed()

        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve_websocket, view, "127.0.0.1", 0, None)
            page = PAGE.format(
                title=html.escape(tool),
                allow=html.escape(app.allow),
                ws_port=server.port,
                app=json.dumps(with_policy(app)).replace("</", "<\\/"),
            ).encode()
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            print(f"open http://127.0.0.1:{port}/", flush=True)

            async def handler(stream: trio.SocketStream) -> None:
                await serve_page(stream, page)

            await trio.serve_listeners(handler, listeners)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="the tool whose app to show")
    parser.add_argument("command", nargs="+", help="the MCP server's command (after --)")
    arguments = parser.parse_args()
    try:
        trio.run(main, arguments.command, arguments.tool)
    except KeyboardInterrupt:
        sys.exit(130)

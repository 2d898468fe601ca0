"""Serve a stdio MCP server over Streamable HTTP (2026-07-28 era), for examples and tests.

Usage: ``python http_front.py [--port N] [-- COMMAND ARG...]`` (default: the
demo server, ``python -m trio_mcp.demo``). It prints ``LISTENING <port>`` on
stdout once it accepts connections, on 127.0.0.1.

One child process serves every request: the body of each POST is written to
its stdin, and the lines it writes back are routed by JSON-RPC id to the
POST that waits for them. An answer that comes alone goes back as JSON; a
notification first (progress) turns the answer into an event stream.
Notifications go to the request named by their progress token, else to the
only request in flight. Only the 2026-07-28 era is stateless enough for this:
``initialize`` and GET are refused (400, 405).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from functools import partial

import h11
import trio


def _response(status: int, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Status'}", "connection: close"]
    if body or status != 200:
        lines.append(f"content-length: {len(body)}")
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Front:
    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.waiting: dict[object, trio.MemorySendChannel[dict]] = {}
        self.tokens: dict[object, object] = {}
        self.write_lock = trio.Lock()

    async def read_server(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    self.route(json.loads(line))

    def route(self, message: dict) -> None:
        if "method" not in message:
            target = self.waiting.pop(message.get("id"), None)
        else:
            token = (message.get("params") or {}).get("progressToken")
            key = self.tokens.get(token)
            if key is None and len(self.waiting) == 1:
                key = next(iter(self.waiting))
            target = self.waiting.get(key)
        if target is not None:
            target.send_nowait(message)

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        request = None
        body = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                if not data:
                    return
                conn.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                break
        assert request is not None
        if request.method != b"POST":
            await stream.send_all(_response(405, {"allow": "POST"}))
            return
        message = json.loads(body)
        if "id" not in message or "method" not in message:
            await self.write(body)
            await stream.send_all(_response(202, {}))
            return
        if message["method"] == "initialize":
            error = {"code": -32600, "message": "this server speaks 2026-07-28 only"}
            await self.answer(stream, {"jsonrpc": "2.0", "id": message["id"], "error": error}, 400)
            return
        key = message["id"]
        send, receive = trio.open_memory_channel[dict](math.inf)
        self.waiting[key] = send
        token = ((message.get("params") or {}).get("_meta") or {}).get("progressToken")
        if token is not None:
            self.tokens[token] = key
        try:
            await self.write(body)
            first = await receive.receive()
            if "method" not in first:
                await self.answer(stream, first)
                return
            await stream.send_all(_response(200, {"content-type": "text/event-stream"}))
            item = first
            while True:
                await stream.send_all(b"event: message\ndata: " + json.dumps(item).encode() + b"\n\n")
                if "method" not in item:
                    return
                item = await receive.receive()
        finally:
            self.waiting.pop(key, None)
            self.tokens.pop(token, None)

    async def answer(self, stream: trio.SocketStream, message: dict, status: int = 200) -> None:
        await stream.send_all(
            _response(status, {"content-type": "application/json"}, json.dumps(message).encode())
        )

    async def write(self, body: bytes) -> None:
        assert self.process.stdin is not None
        async with self.write_lock:
            await self.process.stdin.send_all(body.rstrip(b"\n") + b"\n")

    async def serve(self, stream: trio.SocketStream) -> None:
        try:
            await self.handle(stream)
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
            pass
        finally:
            await trio.aclose_forcefully(stream)


async def main(port: int, command: list[str]) -> None:
    process = await trio.lowlevel.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    front = Front(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(front.read_server)
            listeners = await nursery.start(partial(trio.serve_tcp, front.serve, port, host="127.0.0.1"))
            print(f"LISTENING {listeners[0].socket.getsockname()[1]}", flush=True)
    finally:
        process.kill()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    trio.run(main, args.port, args.command or [sys.executable, "-m", "trio_mcp.demo"])

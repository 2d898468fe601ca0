"""A scripted MCP Apps view for the bridge's tests: a pair of Trio memory channels, and the view's moves."""

from __future__ import annotations

from typing import Any

import trio


class ScriptedView:
    """The view's end: what it sends, what it gets."""

    def __init__(self) -> None:
        self._to_host_send, self._to_host_recv = trio.open_memory_channel[Any](100)
        self._to_view_send, self._to_view_recv = trio.open_memory_channel[Any](100)
        self.ids = 0

    # The bridge's side (a ViewChannel).
    async def send(self, message: dict[str, Any]) -> None:
        await self._to_view_send.send(message)

    async def receive(self) -> object:
        return await self._to_host_recv.receive()

    # The view's side.
    async def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self.ids += 1
        await self._to_host_send.send(
            {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        )
        return self.ids

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._to_host_send.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    async def next(self) -> dict[str, Any]:
        with trio.fail_after(10):
            message: dict[str, Any] = await self._to_view_recv.receive()
            return message

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        sent = await self.request(method, params)
        answer = await self.next()
        assert answer["id"] == sent, answer
        return answer

    async def initialize(self) -> dict[str, Any]:
        answer = await self.call(
            "ui/initialize",
            {
                "protocolVersion": "2026-01-26",
                "appInfo": {"name": "view", "version": "1"},
                "appCapabilities": {},
            },
        )
        await self.notify("ui/notifications/initialized")
        return answer

    def gone(self) -> None:
        self._to_host_send.close()

"""Helpers shared by the tests of the client (``tests/_client/``) and others that run its server.

They run ``tests/servers/mcp_server.py`` (standard library only; its
docstring lists the flags and tools) with the running interpreter, and read
back what the client wrote: the server's ``lines`` tool returns every line it
read, and ``--record PATH`` keeps them in a file, for the tests where the
client never gets as far as calling a tool.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio
from opening_support import process_client

import trio_mcp

SERVER = Path(__file__).parent / "servers" / "mcp_server.py"

#: Seconds any one test may take before it counts as hung.
LIMIT = 10

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

#: What the server's ``requestState`` is: whatever bytes a careless client could mangle.
TRICKY = ('"', "\\", "\u2028", "\u0085", "é", "\U0001f389")

#: The capabilities a 2026-07-28 client with all three hooks declares where input may be asked for.
ALL_HOOK_CAPS = {"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}


def server_args(*flags: str) -> list[str]:
    return [str(SERVER), *flags]


def open_client(*flags: str, **kwargs: Any):
    """``open_stdio_client`` on ``mcp_server.py FLAGS...``."""
    return process_client(sys.executable, server_args(*flags), **kwargs)


def parse(lines: list[str]) -> list[dict[str, Any]]:
    """The JSON objects among raw lines (the ``#start`` markers and junk are skipped)."""
    out = []
    for text in lines:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        if isinstance(message, dict):
            out.append(message)
    return out


async def wire(client: trio_mcp.Client) -> list[dict[str, Any]]:
    """Every message the server has read from the client so far (the ``lines`` call included)."""
    result = await client.call_tool("lines")
    return parse(result.structured_content["lines"])


async def stats(client: trio_mcp.Client) -> dict[str, Any]:
    """How many requests of each method the server got (``reads``: per URI)."""
    return (await client.call_tool("stats")).structured_content


def recorded(path: Path) -> list[list[dict[str, Any]]]:
    """The messages a ``--record`` file holds, one list per server process."""
    runs: list[list[str]] = []
    for text in path.read_text(encoding="utf-8").splitlines():
        if text.startswith("#start"):
            runs.append([])
        else:
            runs[-1].append(text)
    return [parse(run) for run in runs]


def requests(messages: list[dict[str, Any]], method: str | None = None) -> list[dict[str, Any]]:
    """The client's requests among ``messages`` (of one method)."""
    return [m for m in messages if "id" in m and "method" in m and (method is None or m["method"] == method)]


def notifications(messages: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m for m in messages if "id" not in m and m.get("method") == method]


def responses(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The client's answers to requests of the server's."""
    return [m for m in messages if "method" not in m and ("result" in m or "error" in m)]


def tool_calls(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [m for m in requests(messages, "tools/call") if m["params"].get("name") == name]


class Collector(list):
    """A list to use as a callback (``collector.append``) whose growth can be awaited."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = trio.Event()

    def append(self, item: Any) -> None:
        super().append(item)
        self._changed.set()

    async def wait_until(self, condition) -> None:
        """Wait until ``condition(self)`` is true (the enclosing ``fail_after`` bounds it)."""
        while not condition(self):
            self._changed = trio.Event()
            await self._changed.wait()

    async def wait_len(self, count: int) -> None:
        """Wait until at least ``count`` items were appended."""
        await self.wait_until(lambda items: len(items) >= count)

    def methods(self) -> list[str]:
        return [note.get("method") for note in self]

"""The I/O of the HTTP+SSE transport of 2024-11-05: the fallback of the HTTP channel.

When ``initialize`` is refused without an MCP answer, the server may speak
the transport of 2024-11-05: a GET opens an event stream whose first event,
``endpoint``, names the URL every message is POSTed to, and every message of
the server (answers included) comes on that stream. `SseLink` carries those
bytes; what they mean is decided by the pure `trio_mcp._core.http_sse.HttpSse`.
It reaches the channel through `SseOps` alone: how to make an exchange,
what to do with the core's actions, and how to say the stream ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import attrs
import httpx2
import trio

from .._core.http_actions import Action
from .._core.http_sse import HttpSse
from .._core.http_wire import media_type
from .._core.sse import EventParser
from .._errors import HTTPError, MCPError, ServerGone
from .http_io import consume, display_url, lower_headers, network_error, read_some

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from .._core.sse import Item

__all__ = ["SseLink", "SseOps"]

#: How much of a refusal's body is read.
ERROR_BODY_READ = 64 * 1024


class Exchange(Protocol):
    """One HTTP exchange, streaming (the channel's, with its auth and redirects)."""

    def __call__(
        self, method: str, url: str, headers: httpx2.Headers, content: bytes | None = None, /
    ) -> AbstractAsyncContextManager[httpx2.Response]: ...


@attrs.frozen
class SseOps:
    """What the fallback may do in the channel: no more."""

    name: str
    """Who the server is, for messages."""
    url: str
    """The endpoint the GET stream is opened on."""
    headers: Callable[[], httpx2.Headers]
    """The user's headers, a copy each time."""
    exchange: Exchange
    """One HTTP exchange."""
    act: Callable[[list[Action]], None]
    """Do what the core decided (deliver, log, fail)."""
    ended: Callable[[ServerGone], None]
    """The event stream ended: the session is over (unless the channel is closing)."""
    max_message_bytes: int
    """The largest event accepted."""


class SseLink:
    """The HTTP+SSE connection of a channel: its GET stream (`run`) and its POSTs (`post`)."""

    def __init__(self, ops: SseOps) -> None:
        self._ops = ops
        self.state = HttpSse(ops.name, ops.url, display_url(ops.url))

    def withdrawn(self, request_id: int) -> None:
        """Our request is over: an answer to it is nobody's."""
        self.state.withdrawn(request_id)

    async def run(self, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Open the event stream; started once the ``endpoint`` event named where to POST (that
        URL is the start value); then read the server's messages until the stream ends.

        Raises:
            MCPError: Before it started: the server does not speak this transport.
        """
        ops, state = self._ops, self.state
        headers = ops.headers()
        headers["accept"] = "text/event-stream"
        parser = EventParser(ops.max_message_bytes)
        shown = display_url(ops.url)

        def take(chunk: bytes) -> bool:
            for item in parser.feed(chunk):
                on_item(item)
            return False

        def on_item(item: Item) -> None:
            if state.endpoint_url is None:
                found = state.endpoint(item)
                if isinstance(found, MCPError):
                    raise found
                if found is not None:
                    task_status.started(found)
                return
            ops.act(state.event(item))

        async with ops.exchange("GET", ops.url, headers) as response:
            kind = media_type(response.headers.get("content-type"))
            if response.status_code != 200 or kind != "text/event-stream":
                raise HTTPError(
                    f"GET {shown} got HTTP {response.status_code} ({kind or 'no content type'})",
                    url=shown,
                    status=response.status_code,
                )
            _, cause = await consume(response, take)
            for item in parser.eof():
                on_item(item)
            if state.endpoint_url is None:
                raise HTTPError(
                    f"GET {shown} opened an event stream that named no endpoint",
                    url=shown,
                    status=response.status_code,
                )
        how = f" ({network_error(cause)})" if cause is not None else ""
        ops.ended(ServerGone(f"{ops.name} closed its event stream{how}", server=ops.name))

    async def post(self, data: bytes, request_id: int | str | None) -> None:
        """POST one message to the endpoint (``request_id``: ours, when it is a request)."""
        ops, state = self._ops, self.state
        assert state.endpoint_url is not None
        if isinstance(request_id, int):
            state.sent(request_id)
        headers = ops.headers()
        headers["content-type"] = "application/json"
        async with ops.exchange("POST", state.endpoint_url, headers, data) as response:
            status = response.status_code
            body = await read_some(response, ERROR_BODY_READ)
            if status >= 300:
                shown = display_url(str(response.url))
                raise HTTPError(
                    f"{ops.name} refused a message with HTTP {status} ({shown})",
                    url=shown,
                    status=status,
                    headers=lower_headers(response.headers),
                    body=body[:1024].decode("utf-8", "replace"),
                )

"""The requests a server sends us (initialize era), each answered in a task of its own.

Bounded on every side: at most `MAX_SERVER_REQUESTS` run at once (more are
refused with an error answer), a request the server withdraws is cancelled
and answered by no one, and once the connection is closing or has failed
nothing new starts and every one still running is cancelled, so that
closing never waits for a handler (a person who never answers an
elicitation, say).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import trio

from .._core.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    Connection,
    RequestId,
    ServerRequest,
    request_key,
)
from .._errors import RpcError
from .delivery import call_maybe_async

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._options import RequestHandler

__all__ = ["MAX_SERVER_REQUESTS", "ServerRequests"]

#: The server may have this many requests of its own running at once.
MAX_SERVER_REQUESTS: Final = 64


class ServerRequests:
    """The server's requests in flight, and the tasks that answer them.

    Args:
        connection: The JSON-RPC connection (which writes the answers).
        send: Writes one line to the server.
        log: Reports a diagnostic.
        serve: Runs a handler on a request, when the session has telemetry
            (under a span of its own); `None` to call the handler directly.
    """

    def __init__(
        self,
        connection: Connection,
        send: Callable[[bytes], None],
        log: Callable[[str], None],
        serve: Callable[[RequestHandler, ServerRequest], Awaitable[object]] | None = None,
    ) -> None:
        self._conn = connection
        self._send = send
        self._log = log
        self._traced_serve = serve
        self._tasks: dict[tuple[bool, RequestId], trio.CancelScope] = {}
        self.received = 0
        """How many requests the server sent."""
        self.stopped = False
        """Whether the connection is closing or failed: nothing new starts."""

    def start(
        self, event: ServerRequest, handler: RequestHandler | None, nursery: trio.Nursery, *, shield: bool
    ) -> None:
        """Answer ``event`` with ``handler`` in a task of ``nursery`` (or refuse it)."""
        self.received += 1
        conn = self._conn
        if self.stopped:
            # Nothing new starts once closing: close stays bounded.
            conn.forget_server_request(event.request_id)
            self._log(f"ignored server request {event.method!r} (id {event.request_id!r}): closing")
            return
        if handler is None or len(self._tasks) >= MAX_SERVER_REQUESTS:
            if handler is None:
                why = "no handler for server requests"
                line = conn.respond_error(
                    event.request_id, METHOD_NOT_FOUND, f"Method not found: {event.method}"
                )
            else:
                why = "too many server requests at once"
                line = conn.respond_error(event.request_id, INTERNAL_ERROR, "client busy: too many requests")
            self._log(f"refused server request {event.method!r} (id {event.request_id!r}): {why}")
            if line is not None:
                self._send(line)
            return
        # Ended by the server (notifications/cancelled), or by stop().
        scope = trio.CancelScope(shield=shield)
        self._tasks[request_key(event.request_id)] = scope
        nursery.start_soon(self._serve, handler, event, scope, name=f"trio_mcp:{event.method}")

    def cancel(self, request_id: RequestId) -> None:
        """The server withdrew request ``request_id``: cancel its handler (no answer is sent)."""
        scope = self._tasks.pop(request_key(request_id), None)
        if scope is not None:
            scope.cancel()

    def stop(self) -> None:
        """Start nothing new, and cancel every handler still running."""
        self.stopped = True
        for scope in self._tasks.values():
            scope.cancel()
        self._tasks.clear()

    async def _serve(self, handler: RequestHandler, event: ServerRequest, scope: trio.CancelScope) -> None:
        conn = self._conn
        line: bytes | None = None
        with scope:
            try:
                if self._traced_serve is None:
                    result: object = await call_maybe_async(handler, event.method, event.params)
                else:
                    result = await self._traced_serve(handler, event)
            except RpcError as exc:
                line = conn.respond_error(event.request_id, exc.code, exc.message, exc.data)
            except Exception as exc:
                self._log(f"the handler for server request {event.method!r} raised {exc!r}")
                line = conn.respond_error(event.request_id, INTERNAL_ERROR, f"client error: {exc}")
            else:
                if isinstance(result, dict):
                    line = conn.respond(event.request_id, result)
                elif result is None:
                    # The handler chose not to answer (a server request in an
                    # era where servers send none is ignored, not answered).
                    conn.forget_server_request(event.request_id)
                else:
                    self._log(
                        f"the handler for {event.method!r} returned {type(result).__name__}, not a dict"
                    )
                    line = conn.respond_error(event.request_id, INTERNAL_ERROR, "client error: bad result")
        if self._tasks.get(request_key(event.request_id)) is scope:
            del self._tasks[request_key(event.request_id)]
        # A withdrawn request (or a dead connection) gets no answer: the core
        # has forgotten it, so ``line`` is None or the scope was cancelled.
        if line is not None and not scope.cancelled_caught and not self.stopped:
            self._send(line)

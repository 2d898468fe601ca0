"""An `~trio_mcp._serving.http.HTTPFront` on TCP sockets: HTTP/1.1 with h11.

h11 is the ``http`` extra's already (httpx2's HTTP/1.1 through httpcore2, and
the loopback listener of a login), and it is the sans-io HTTP/1.1 parser
that this package's own HTTP code is modelled on: a request parser written
here would be a second one to fuzz. Each TCP connection is served in a task
of its own, keep-alive, one request at a time: the whole request is read
(bodies over `~trio_mcp._serving.http.MAX_BODY` get 413), handed to the
front, and its response written, an event stream in chunks as its events
come. While a request is served the socket is watched: a client that hangs
up closes its exchange (for a 2026-07-28 request not answered yet, that is
its cancellation). A connection behind the front that ends before answering
makes the socket close without an answer, as a server that died would.
"""

from __future__ import annotations

from functools import partial

import h11
import trio

from .http import MAX_BODY, FrontGone, HTTPFront, HTTPRequest, HTTPResponse

__all__ = ["serve_front"]

#: The longest request line and header block.
MAX_HEAD = 64 * 1024
#: Bytes read from a socket at a time.
READ_SIZE = 65536


async def serve_front(
    front: HTTPFront,
    host: str,
    port: int,
    *,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``front`` and serve it on ``host``:``port`` until cancelled.

    Reports the listeners when they accept connections (``port`` 0 picks a
    free port: read it from ``listeners[0].socket.getsockname()``).

    Raises:
        OSError: The address cannot be listened on (raised by
            ``nursery.start``, before anything is served).
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(front.run)
            task_status.started(listeners)
            await trio.serve_listeners(partial(_serve, front), listeners)
    finally:
        for listener in listeners:
            await trio.aclose_forcefully(listener)


async def _serve(front: HTTPFront, stream: trio.SocketStream) -> None:
    try:
        await _Connection(front, stream).run()
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError) as exc:
        front.log(f"an HTTP connection ended: {exc!r}")
    finally:
        await trio.aclose_forcefully(stream)


class _HungUp(Exception):
    """The connection is to be closed without more ado."""


class _Connection:
    def __init__(self, front: HTTPFront, stream: trio.SocketStream) -> None:
        self.front = front
        self.stream = stream
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)

    async def _receive(self) -> bytes:
        try:
            return bytes(await self.stream.receive_some(READ_SIZE))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def _next_event(self) -> object:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(await self._receive())

    async def _send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            await self.stream.send_all(data)

    async def run(self) -> None:
        while True:
            event = await self._next_event()
            if not isinstance(event, h11.Request):
                return  # closed (or paused by a client that does not wait for answers)
            body = bytearray()
            while True:
                part = await self._next_event()
                if isinstance(part, h11.Data):
                    body += part.data
                    if len(body) > MAX_BODY:
                        await self._whole(
                            HTTPResponse(413, [("connection", "close")], b"Payload Too Large\n")
                        )
                        return
                elif isinstance(part, h11.EndOfMessage):
                    break
                else:
                    return
            target = event.target.decode("ascii", "replace")
            request = HTTPRequest(
                event.method.decode("ascii", "replace"),
                target.split("?", 1)[0],
                [(name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers],
                bytes(body),
            )
            if not await self._respond(request):
                return
            if self.conn.our_state is not h11.DONE or self.conn.their_state is not h11.DONE:
                return
            self.conn.start_next_cycle()

    async def _respond(self, request: HTTPRequest) -> bool:
        """Serve one request, watching for the client hanging up; whether the connection goes on."""
        hung_up = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal hung_up
                while True:
                    data = await self._receive()
                    self.conn.receive_data(data)
                    if not data:
                        hung_up = True
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(watch)
            try:
                await self._answer(request)
            except (_HungUp, trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
                hung_up = True
            finally:
                nursery.cancel_scope.cancel()
        return not hung_up

    async def _answer(self, request: HTTPRequest) -> None:
        try:
            response = await self.front.handle(request)
        except FrontGone:
            raise _HungUp from None
        if not response.streaming:
            await self._whole(response)
            return
        try:
            await self._send(h11.Response(status_code=response.status, headers=response.headers))
            while True:
                try:
                    chunk = await response.receive()
                except FrontGone:
                    raise _HungUp from None
                if chunk is None:
                    break
                await self._send(h11.Data(data=chunk))
            await self._send(h11.EndOfMessage())
        finally:
            response.close()

    async def _whole(self, response: HTTPResponse) -> None:
        headers = [*response.headers, ("content-length", str(len(response.body)))]
        await self._send(h11.Response(status_code=response.status, headers=headers))
        if response.body:
            await self._send(h11.Data(data=response.body))
        await self._send(h11.EndOfMessage())

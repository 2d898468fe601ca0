"""The stream channel: MCP over any Trio byte stream.

A socket, an SSH channel, `trio.testing.memory_stream_pair`, a
`trio.StapledStream` of two pipes: one JSON-RPC message per line, as on
stdio. Two tasks move the bytes: a reader (framing lines, bounded, linear)
and a writer (which joins whatever was queued meanwhile into one
``send_all``, so that a peer that stops reading blocks only the writer).
The end of the stream, or an error on it, ends the connection with
`ServerGone`. Closing writes what was sent before (within the close grace),
then closes the stream: a notification sent just before ``aclose`` reaches
the peer, as it would through a pipe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import trio

from .._channel import Channel
from .._core.framing import LineFramer, clean_line
from .._errors import ServerGone
from .._trio.parking import Parking
from ._outbox import Outbox

if TYPE_CHECKING:
    from .._channel import Outgoing, Receiver, TaskStarter

__all__ = ["StreamChannel"]

_READ_SIZE: Final = 256 * 1024
#: How long closing waits for the stream's own graceful close.
CLOSE_GRACE: Final = 2.0


class StreamChannel(Channel):
    """A channel over one Trio `~trio.abc.Stream`, one message per line.

    Args:
        stream: The byte stream to the server. The channel owns it from now
            on: closing the channel closes it.
        max_message_bytes: The longest line accepted.
        name: How messages name the server (``server 'NAME'``); by default
            by the stream's type.
    """

    def __init__(self, stream: trio.abc.Stream, max_message_bytes: int, name: str | None = None) -> None:
        self.stream = stream
        self._name = f"server {name!r}" if name is not None else f"server on a {type(stream).__name__}"
        self._framer = LineFramer(max_message_bytes)
        self._receiver: Receiver | None = None
        self._outbox = Outbox()
        self._drained = Parking()
        self._sending = False
        self._broken = False
        self._ended = False
        self._closing = False
        self._closed = trio.Event()
        self._started = False

    @property
    def name(self) -> str:
        return self._name

    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        await trio.lowlevel.checkpoint()
        self._receiver = receiver
        self._started = True
        start_task(self._read, "read_stream")
        start_task(self._write, "write_stream")

    # ------------------------------------------------------------- writing

    def send(self, data: bytes, about: Outgoing, *, batch: bool = False) -> None:
        if self._broken:
            return
        self._outbox.put(data, about.request_id)

    def withdraw(self, request_id: int) -> bool:
        return self._outbox.withdraw(request_id)

    async def _write(self) -> None:
        outbox = self._outbox
        while True:
            if not outbox:
                self._drained.wake()
                await outbox.wait()
            batch = outbox.take()
            if not batch:
                continue
            self._sending = True
            try:
                await self.stream.send_all(batch)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                self._broken = True
                outbox.clear()
                self._drained.wake()
                if not self._closing:
                    self._end(f"{self.name} stopped reading ({exc!r})")
                return
            finally:
                self._sending = False

    # ------------------------------------------------------------- reading

    async def _read(self) -> None:
        receiver = self._receiver
        assert receiver is not None
        framer = self._framer
        deliver = receiver.message_received
        why = f"{self.name} closed the connection"
        try:
            while True:
                data = await self.stream.receive_some(_READ_SIZE)
                if not data:
                    break
                for line in framer.feed(bytes(data)):
                    if isinstance(line, bytes) and not (line[:1] == b"{" and line[-1:] == b"}"):
                        line = clean_line(line)
                        if not line:
                            continue
                    deliver(line)
            for line in framer.eof():
                if isinstance(line, bytes):
                    line = clean_line(line)
                    if not line:
                        continue
                deliver(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            why = f"the connection to {self.name} broke ({exc!r})"
        if not self._closing:
            self._end(why)

    def _end(self, why: str) -> None:
        if self._ended:
            return
        self._ended = True
        receiver = self._receiver
        assert receiver is not None
        receiver.channel_ended(self.gone(why))

    def gone(self, why: str) -> ServerGone:
        """The error for the end of the stream (``why`` says how it ended)."""
        return ServerGone(why, server=self.name)

    def log(self, text: str) -> None:
        """Report a diagnostic of the channel's to the session."""
        if self._receiver is not None:
            self._receiver.channel_log(text)

    # ---------------------------------------------------------------- close

    async def aclose(self, deadline: float | None = None) -> None:
        if deadline is None:
            deadline = trio.current_effective_deadline()
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        self._broken = True
        with trio.CancelScope(shield=True):
            # A stream's own close may say goodbye to the peer (TLS does):
            # bounded, then forceful.
            with trio.move_on_after(max(0.0, min(CLOSE_GRACE, deadline - trio.current_time()))):
                # What was sent before goes out first (the writer is still running).
                while self._started and (self._outbox or self._sending):
                    await self._drained.park()
                await self.stream.aclose()
                self._closed.set()
            if not self._closed.is_set():
                await trio.aclose_forcefully(self.stream)
        self._closed.set()

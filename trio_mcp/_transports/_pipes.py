"""The speed tricks of the child process's pipes, in one place.

A request made while nothing else is in flight (one call at a time, the
commonest use) would cost, done the plain Trio way, five task steps and four
waits for I/O: the caller hands its message to a writer task, which writes it
with ``send_all``; a reader task reads the answer with ``receive_some`` and
wakes the caller. The first two tricks here bring that to one task step and
one wait, the caller's own; the third keeps a pipeline's server busy
(``nox -s bench``; docs/design.rst, "Speed tricks"):

* `write_now`: a lone request's message is written by the caller at once,
  with one non-blocking ``write(2)`` (what the pipe does not take goes to
  the writer task's queue, so nothing ever blocks the caller). Only while
  stdout is lent (`StdoutReader.lent`): in a pipeline, a message written
  alone would split the writer's batch, and the answers into more reads.
* `StdoutReader`: the reader task lends stdout to a lone request, which reads
  its own answer in its own task (`StdoutReader.read_until`), reading first
  and waiting only when nothing is there yet. The reader task takes stdout
  back when no caller came for it within `LEASE` seconds, so that a
  notification that arrives between requests waits at most that long.
* `FLUSH_AT`: in a pipeline, the messages the callers queue during one
  scheduler pass are the writer task's batch, written once they have all
  run. With hundreds in flight the server then sat idle while the client
  made the whole batch, and the client while the server answered it: each
  call cost the client's time plus the server's. The caller whose message
  makes the queue `FLUSH_AT` long writes it at once (`write_now`), unless
  the writer task is waiting for room to write the rest of a batch, so
  that the server answers the first messages of the pass while the client
  makes the rest. The writer task, too, writes what the pipe takes at once,
  and waits for room only for the rest.

Otherwise, while requests are pipelined, messages are batched by the writer
task and answers read by the reader task, through Trio's own
`trio.lowlevel.FdStream`.
"""

from __future__ import annotations

import os
import select
from typing import TYPE_CHECKING, Final, Literal

import trio

from .._trio.parking import Parking

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FLUSH_AT", "LEASE", "READ_SIZE", "StdoutReader", "write_now"]

#: How long the reader task lends stdout to callers that read their own
#: answers, before it takes it back (only while nothing is in flight: a
#: notification then waits at most about this long).
LEASE: Final = 0.005
#: The most one read of stdout asks for: a pipe holds 64 KiB, and asking
#: for much more costs an allocation the size of the request on every read.
READ_SIZE: Final = 64 * 1024
#: In a pipeline, the caller whose message makes the queue this long writes
#: the queue at once, rather than leaving it to the writer task's turn. A
#: larger batch costs fewer writes, a smaller one starts the server sooner:
#: with 256 calls in flight, 64 did best of 16, 32, 64 and 128 (fewer than 64
#: in flight never reach it).
FLUSH_AT: Final = 64
#: A caller reading its own answer that finds more output chunk after chunk
#: lets other tasks run after this many.
YIELD_EVERY: Final = 4

_Holder = Literal["reader", "direct", "idle"]

_wait_readable = trio.lowlevel.wait_readable
_checkpoint_if_cancelled = trio.lowlevel.checkpoint_if_cancelled
_cancel_shielded_checkpoint = trio.lowlevel.cancel_shielded_checkpoint


def write_now(fd: int, data: bytes) -> int:
    """Write what the pipe takes of ``data`` at once, without waiting; return how many bytes.

    ``0`` when the pipe is full. Raises `OSError` when the pipe is broken
    (the reader end was closed).
    """
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


class StdoutReader:
    """Who reads a child's stdout: the reader task (`run`), or a lone request's own task (`read_until`).

    Every byte read goes to ``feed``, in order, whoever reads it; the end of
    the output (``None``) or a failure to read it goes to ``ended``, once.
    ``is_idle`` says whether no request awaits an answer: only then is
    stdout lent to a caller.

    Args:
        stream: The child's stdout, as Trio opened it.
        feed: Called with each chunk read.
        ended: Called once, with `None` at the end of the output or with
            the error that ended reading.
        is_idle: Whether no request awaits an answer.
        lend: Whether stdout is ever lent (without, the reader task reads it all).
    """

    __slots__ = (
        "_fd",
        "_feed",
        "_is_idle",
        "_lend",
        "_lent",
        "_on_ended",
        "_reader",
        "_stream",
        "closing",
        "eof",
        "holder",
    )

    def __init__(
        self,
        stream: trio.lowlevel.FdStream,
        *,
        feed: Callable[[bytes], None],
        ended: Callable[[BaseException | None], None],
        is_idle: Callable[[], bool],
        lend: bool = True,
    ) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        self._feed = feed
        self._on_ended = ended
        self._is_idle = is_idle
        self._lend = lend
        self.holder: _Holder = "reader"
        """Who reads now: the reader task, a caller (``direct``), or whoever comes first (``idle``)."""
        self.closing = False
        """Set by the channel when it closes: stdout is lent no more."""
        self.eof = False
        """Whether the output ended (or reading it failed)."""
        self._reader = Parking()
        self._lent = 0

    def _lendable(self) -> bool:
        return self._lend and self._is_idle() and not self.closing and not self.eof

    def _ended(self, exc: BaseException | None) -> None:
        if not self.eof:
            self.eof = True
            self._on_ended(exc)

    async def run(self) -> None:
        """The reader task: read stdout until it ends, lending it while nothing is in flight."""
        stream = self._stream
        try:
            while not self.eof:
                if self.holder != "reader":
                    # A caller reads stdout itself (or may soon): rest, and
                    # take stdout back when nobody came for it for a whole lease.
                    lent = self._lent
                    with trio.move_on_after(LEASE):
                        await self._reader.park()
                    if self._lent == lent and self.holder == "idle":
                        self.holder = "reader"
                    continue
                data = await stream.receive_some(READ_SIZE)
                if not data:
                    self._ended(None)
                    return
                self._feed(data)
                if self._lendable() and data.count(b"\n") <= 1:
                    # Nothing in flight, after one message: the next lone
                    # request may read its own answer. (After many answers at
                    # once, their tasks are a pipeline that will send again at
                    # once: lending stdout to the first of them would split
                    # the pipeline's batches, and its answers into more reads.)
                    self.holder = "idle"
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self._ended(None if self.closing else exc)

    async def read_until(self, done: Callable[[], bool]) -> bool:
        """Read stdout in the caller's task until ``done()`` holds; see `trio_mcp._channel.Channel.read_until`.

        `False` at once when stdout is not lent now (a request is in flight,
        the output ended, the channel closes).
        """
        if self.holder != "idle" or self.eof:
            return False
        # Trio's pattern for an operation that may complete at once: the
        # cancel point first, a schedule point last.
        await _checkpoint_if_cancelled()
        self.holder = "direct"
        self._lent += 1
        fd = self._fd
        waited = False
        unbroken = 0
        try:
            # Read first, wait only when there is nothing to read: the answer
            # is often there already (always, when this task was slow to get
            # here), and waiting costs an epoll registration.
            while not done():
                try:
                    data = os.read(fd, READ_SIZE)
                except BlockingIOError:
                    waited = True
                    unbroken = 0
                    await _wait_readable(fd)
                    continue
                except OSError as exc:
                    self._ended(exc)
                    return True
                if not data:
                    self._ended(None)
                    return True
                unbroken += 1
                if unbroken % YIELD_EVERY == 0:
                    waited = True
                    await trio.lowlevel.checkpoint()
                self._feed(data)
        except trio.ClosedResourceError:
            return True
        finally:
            if self.holder == "direct":
                if self._is_idle() and not self.closing and not self.eof:
                    self.holder = "idle"
                else:
                    self.holder = "reader"
                    self._reader.wake()
        if not waited:
            await _cancel_shielded_checkpoint()
        return True

    @property
    def lent(self) -> bool:
        """Whether stdout waits for a lone request to read its own answer.

        Only then are requests going one at a time, and only then does the
        channel write a request at once (`write_now`): in a pipeline, a
        message written alone would break the batch it belongs to, and its
        answers into more reads.
        """
        return self.holder == "idle"

    def take_back(self, *, interrupt: bool) -> None:
        """Make the reader task read stdout again (the server died, or the channel closes).

        With ``interrupt``, a caller reading stdout now is woken too (it
        stops; its request is failed by whoever called this).
        """
        if interrupt and self.holder == "direct":
            trio.lowlevel.notify_closing(self._fd)
        if interrupt or self.holder == "idle":
            self.holder = "reader"
            self._reader.wake()

    def has_data(self) -> bool:
        """Whether stdout has bytes to read now."""
        if self.eof:
            return False
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        return bool(poller.poll(0))

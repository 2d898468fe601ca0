"""The in-memory channel: a server in the same Trio run, as if it were a process.

`MemoryChannel` is a `StreamChannel` over one end of
`trio.testing.memory_stream_pair`: the client's bytes go through the same
framing, reader and writer as over a socket. A process has two more things a
stream lacks, and the channel adds them for the server on the other end:
a stderr (`MemoryChannel.stderr_line`) and an exit status
(`MemoryChannel.exited`, then the end of the stream), so that an in-memory
server can die with an exit code, a signal and last words on stderr, and the
client sees the same `ServerGone` as from a real process.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from .._errors import ServerGone
from .process import default_stderr, signal_name
from .stream import StreamChannel

if TYPE_CHECKING:
    from collections.abc import Callable

    import trio

__all__ = ["MemoryChannel"]


class MemoryChannel(StreamChannel):
    """A stream channel with a stderr and an exit status, for in-memory servers.

    Args:
        stream: The client's end of the byte stream to the server.
        max_message_bytes: The longest line accepted.
        name: The server's name, as messages give it (``server 'NAME'``).
        on_stderr: Called with each stderr line (default: the ``trio_mcp.server``
            logger at DEBUG, as for a process).
        stderr_tail_bytes: How much of the end of stderr `ServerGone` carries.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        max_message_bytes: int,
        name: str,
        *,
        on_stderr: Callable[[str], object] | None = None,
        stderr_tail_bytes: int = 8 * 1024,
    ) -> None:
        super().__init__(stream, max_message_bytes, name)
        self._on_stderr = on_stderr if on_stderr is not None else default_stderr
        self._tail_limit = stderr_tail_bytes
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._lines = 0
        self._status: tuple[int | None, int | None] | None = None

    @property
    def stderr_tail(self) -> str:
        return "".join(line + "\n" for line in self._tail)

    @property
    def stderr_lines(self) -> int:
        return self._lines

    @property
    def returncode(self) -> int | None:
        if self._status is None:
            return None
        code, signal = self._status
        return -signal if signal is not None else code

    def stderr_line(self, text: str) -> None:
        """The server wrote ``text`` (one line, without its newline) to stderr."""
        self._lines += 1
        self._tail.append(text)
        self._tail_size += len(text) + 1
        while self._tail_size > self._tail_limit and self._tail:
            self._tail_size -= len(self._tail.popleft()) + 1
        try:
            self._on_stderr(text)
        except Exception as exc:
            self.log(f"on_stderr raised {exc!r}")

    def exited(self, code: int | None, signal: int | None = None) -> None:
        """The server "exited" with ``code`` (or was killed by ``signal``).

        Call it before the server closes its end of the stream: the end of
        the stream then reports this exit, as `ServerGone` does for a process.
        """
        self._status = (code, signal)

    def gone(self, why: str) -> ServerGone:
        status = self._status
        if status is None:
            return super().gone(why)
        code, signal = status
        what = f"was killed by {signal_name(signal)}" if signal is not None else f"exited with code {code}"
        return ServerGone(
            f"{self.name} {what}",
            exit_code=code if signal is None else None,
            signal=signal,
            stderr_tail=self.stderr_tail,
            server=self.name,
            pid=self.pid,
        )

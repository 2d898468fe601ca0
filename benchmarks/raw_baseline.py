"""The raw Trio baselines: the least code that does JSON-RPC over a child's pipes.

They are what a careful programmer would write by hand for one known server,
with none of trio_mcp's duties (no validation, no timeouts, no cancellation
protocol, no notification routing, no bounded framing, no process-group
teardown), and with the fastest plain I/O for each workload.

`SequentialClient` (`open_sequential_client`), for one request at a time,
with no task besides the caller's. Its `SequentialClient.request` encodes
the line, writes it with a direct non-blocking ``os.write`` on the pipe
(waiting for the pipe to become writable only when it is full), then reads
stdout itself (non-blocking ``os.read``, waiting for readability only when
there is nothing to read), splits on LF and decodes with orjson until its
own answer arrives. Nothing is handed from task to task: a round trip is a
write, a read, and a pass through Trio's I/O wait only when the answer is
not there yet (when it is, one plain checkpoint instead: like any Trio
call, a request lets other tasks run and can be cancelled). It is a
baseline of the sequential metrics, the 10 MiB response included.

`RawClient` (`open_raw_client`), for many requests in flight (it serves one at
a time as well):

* One writer task. Callers append their line to a list and wake it; it joins
  every line queued meanwhile into one write. At hundreds of requests in
  flight one write per batch is far faster than one write per message, and
  much faster than callers writing under a `trio.Lock`. It writes in one of
  two ways, and the benchmark measures both and compares against the faster:

  - ``"send_all"``: the stream's ``send_all``, which checkpoints (lets every
    other runnable task run) before it writes. The pause gathers bigger
    batches under load, at the price of a scheduler pass on every write.
  - ``"os.write"``: a direct non-blocking ``os.write`` on the pipe (waiting
    for it to become writable only when it is full). Lower latency, smaller
    batches.
* One reader task. It splits stdout on LF (joining a long line's chunks once),
  decodes each line with orjson and hands the message to the slot of its id.
* A request is a `trio.Event` in a dict, keyed by id.

For the ``call_tool`` benchmarks, ``call_tool`` (of either client) sends a
``tools/call`` request with the modern (2026-07-28) ``_meta`` envelope, a
constant, and returns the result as decoded: no ``server/discover``, no model
classes, no ``resultType`` check.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import orjson
import trio

__all__ = [
    "ENVELOPE",
    "WRITE_MODES",
    "RawClient",
    "SequentialClient",
    "WriteMode",
    "open_raw_client",
    "open_sequential_client",
]

_READ_SIZE = 256 * 1024

#: The ``_meta`` of every modern request: the version, no optional capabilities, who we are.
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-baseline", "version": "0"},
}

WriteMode = Literal["send_all", "os.write"]
WRITE_MODES: tuple[WriteMode, ...] = ("send_all", "os.write")


class _Slot:
    __slots__ = ("event", "message")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.message: Any = None


class RawClient:
    """A bare JSON-RPC client over a child process's stdin and stdout."""

    def __init__(self, process: trio.Process, write_mode: WriteMode = "send_all") -> None:
        if write_mode not in WRITE_MODES:
            raise ValueError(f"write_mode must be one of {WRITE_MODES}")
        self._process = process
        self._write_mode = write_mode
        self._next_id = 1
        self._slots: dict[int, _Slot] = {}
        self._queue: list[bytes] = []
        self._queued = trio.Event()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return the ``result`` of its answer."""
        request_id = self._next_id
        self._next_id = request_id + 1
        slot = self._slots[request_id] = _Slot()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._queue.append(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))
        self._queued.set()
        await slot.event.wait()
        return slot.message["result"]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool (modern era); return the ``result`` of the answer as decoded."""
        params: dict[str, Any] = {"name": name, "_meta": ENVELOPE}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("tools/call", params)

    async def _write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        fd = stdin.fileno()
        direct = self._write_mode == "os.write"
        while True:
            await self._queued.wait()
            self._queued = trio.Event()
            queue, self._queue = self._queue, []
            data = queue[0] if len(queue) == 1 else b"".join(queue)
            if not direct:
                await stdin.send_all(data)
                continue
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(fd)

    async def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        slots = self._slots
        parts: list[bytes] = []
        while True:
            data = await stdout.receive_some(_READ_SIZE)
            if not data:
                return
            start = 0
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    if start < len(data):
                        parts.append(data[start:] if start else data)
                    break
                if parts:
                    parts.append(data[start:end])
                    line = b"".join(parts)
                    parts.clear()
                else:
                    line = data[start:end]
                start = end + 1
                message = orjson.loads(line)
                slot = slots.pop(message["id"])
                slot.message = message
                slot.event.set()


class SequentialClient:
    """A bare JSON-RPC client that does everything in the calling task, one request at a time."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        # Trio's process streams have set both pipes non-blocking (and close
        # them when collected: hold on to the process).
        self._process = process
        self._stdin = process.stdin.fileno()
        self._stdout = process.stdout.fileno()
        self._next_id = 1
        self._rest = b""  # what was read past the last answer (nothing, with a well-behaved server)
        self._waited = False

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return the ``result`` of its answer.

        Never call it from two tasks at once: the answers would go astray.
        Like every Trio call, it is a checkpoint: when the answer was there
        without waiting, it yields to the scheduler once at the end.
        """
        self._waited = False
        request_id = self._next_id
        self._next_id = request_id + 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        data = orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
        try:
            written = os.write(self._stdin, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                try:
                    view = view[os.write(self._stdin, view) :]
                except BlockingIOError:
                    self._waited = True
                    await trio.lowlevel.wait_writable(self._stdin)
        answer = orjson.loads(await self._read_line())
        if answer.get("id") != request_id:
            raise RuntimeError(f"expected the answer to {request_id}, got {answer!r}")
        if not self._waited:
            await trio.lowlevel.checkpoint()
        return answer["result"]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool (modern era); return the ``result`` of the answer as decoded."""
        params: dict[str, Any] = {"name": name, "_meta": ENVELOPE}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("tools/call", params)

    async def _read_line(self) -> bytes:
        data = self._rest
        parts: list[bytes] = []
        fd = self._stdout
        while True:
            end = data.find(b"\n")
            if end >= 0:
                self._rest = data[end + 1 :]
                if parts:
                    parts.append(data[:end])
                    return b"".join(parts)
                return data[:end]
            if data:
                parts.append(data)
            # Read first, wait only when there is nothing to read: cheaper than
            # waiting first (measured), as the answer is often there already.
            while True:
                try:
                    data = os.read(fd, _READ_SIZE)
                    break
                except BlockingIOError:
                    self._waited = True
                    await trio.lowlevel.wait_readable(fd)
            if not data:
                raise EOFError("the server closed its stdout")


async def _close(process: trio.Process) -> None:
    with trio.CancelScope(shield=True):
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.aclose()
        await process.stdout.aclose()
        with trio.move_on_after(5):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@asynccontextmanager
async def open_sequential_client(argv: Sequence[str | os.PathLike[str]]) -> AsyncIterator[SequentialClient]:
    """Start ``argv`` with piped stdin and stdout and talk JSON-RPC to it from one task."""
    process = await trio.lowlevel.open_process(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield SequentialClient(process)
    finally:
        await _close(process)


@asynccontextmanager
async def open_raw_client(
    argv: Sequence[str | os.PathLike[str]], write_mode: WriteMode = "send_all"
) -> AsyncIterator[RawClient]:
    """Start ``argv`` with piped stdin and stdout and talk JSON-RPC to it."""
    process = await trio.lowlevel.open_process(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    client = RawClient(process, write_mode)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client._write)
            nursery.start_soon(client._read)
            try:
                yield client
            finally:
                nursery.cancel_scope.cancel()
    finally:
        await _close(process)

"""Tests of `trio_mcp._transports._pipes`: the speed tricks of a child process's pipes, over real pipes.

`write_now` writes a lone message at once, and `StdoutReader` lends stdout to
a lone request, which reads its own answer in its own task. Each test checks
what the trick promises (who reads, that nothing is lost or reordered, that
the lease ends) on an `os.pipe` wrapped as Trio wraps a child's stdout.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import trio

from trio_mcp._transports._pipes import LEASE, StdoutReader, write_now


class Pipe:
    """A pipe whose read end a `StdoutReader` reads, and a record of what it did."""

    def __init__(self, *, lend: bool = True) -> None:
        read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)
        self.stream = trio.lowlevel.FdStream(read_fd)
        self.chunks: list[bytes] = []
        self.readers: list[trio.lowlevel.Task] = []
        self.endings: list[BaseException | None] = []
        self.fed = trio.Event()
        self.idle = True
        self.reader = StdoutReader(
            self.stream, feed=self.feed, ended=self.endings.append, is_idle=self.is_idle, lend=lend
        )

    def feed(self, data: bytes) -> None:
        self.chunks.append(data)
        self.readers.append(trio.lowlevel.current_task())
        self.fed.set()

    def is_idle(self) -> bool:
        return self.idle

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)

    def write(self, data: bytes) -> None:
        assert os.write(self.write_fd, data) == len(data)

    def close_writer(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    async def until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            self.fed = trio.Event()
            await self.fed.wait()


@asynccontextmanager
async def running(pipe: Pipe) -> AsyncIterator[trio.lowlevel.Task]:
    """Run the pipe's reader task; yield it. Leaving closes both ends."""
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pipe.reader.run, name="reader")
                await trio.testing.wait_all_tasks_blocked()
                (task,) = [child for child in nursery.child_tasks if child.name == "reader"]
                yield task
                nursery.cancel_scope.cancel()
    finally:
        pipe.close_writer()
        await pipe.stream.aclose()


# ---------------------------------------------------------------- write_now


def test_write_now_writes_at_once_what_the_pipe_takes() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        assert write_now(write_fd, b'{"id":1}\n') == 9
        # Already in the pipe: no task, no wait.
        assert os.read(read_fd, 100) == b'{"id":1}\n'
        # A full pipe takes part of a message, then nothing: the rest is the writer task's.
        big = b"x" * (1 << 20)
        taken = write_now(write_fd, big)
        assert 0 < taken < len(big)
        assert write_now(write_fd, b"more") == 0
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_write_now_raises_for_a_broken_pipe() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    os.close(read_fd)
    try:
        with pytest.raises(BrokenPipeError):
            write_now(write_fd, b"{}\n")
    finally:
        os.close(write_fd)


# ------------------------------------------------------------- StdoutReader


async def test_the_reader_task_reads_while_a_request_is_in_flight() -> None:
    pipe = Pipe()
    pipe.idle = False
    async with running(pipe) as reader_task:
        # Not lent: a caller is told to wait for the reader.
        assert not await pipe.reader.read_until(lambda: True)
        pipe.write(b"one\n")
        await pipe.until(lambda: pipe.data == b"one\n")
        assert pipe.readers == [reader_task]
        assert pipe.reader.holder == "reader"


@pytest.mark.usefixtures("held_lease")
async def test_a_lone_request_reads_its_own_answer_in_its_own_task() -> None:
    pipe = Pipe()
    async with running(pipe) as reader_task:
        # A first message read by the reader while nothing is in flight lends stdout.
        pipe.write(b"hello\n")
        await pipe.until(lambda: pipe.data == b"hello\n")
        await trio.testing.wait_all_tasks_blocked()
        assert pipe.reader.holder == "idle"

        async def answer_later() -> None:
            await trio.testing.wait_all_tasks_blocked()
            pipe.write(b"answer\n")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_later)
            assert await pipe.reader.read_until(lambda: pipe.data.endswith(b"answer\n"))
        me = trio.lowlevel.current_task()
        assert pipe.readers == [reader_task, me]
        # Still nothing in flight: lent again to the next lone request.
        assert pipe.reader.holder == "idle"


@pytest.mark.usefixtures("held_lease")
async def test_many_answers_at_once_are_a_pipeline_not_a_lone_request() -> None:
    """After several messages in one read, stdout is not lent, even with nothing in flight.

    Their tasks are about to send again at once: lending stdout to the first
    of them would write its request alone and read its answer alone, splitting
    the pipeline's batches.
    """
    pipe = Pipe()
    async with running(pipe) as reader_task:
        pipe.write(b"one\ntwo\nthree\n")
        await pipe.until(lambda: pipe.data == b"one\ntwo\nthree\n")
        await trio.testing.wait_all_tasks_blocked()
        assert pipe.reader.holder == "reader"
        assert not pipe.reader.lent
        assert not await pipe.reader.read_until(lambda: True)
        # One message alone: a lone request's answer (or a notification between requests).
        pipe.write(b"four\n")
        await pipe.until(lambda: pipe.data.endswith(b"four\n"))
        await trio.testing.wait_all_tasks_blocked()
        assert pipe.reader.lent
        assert pipe.readers == [reader_task, reader_task]


@pytest.mark.usefixtures("held_lease")
async def test_an_answer_already_there_is_read_without_waiting() -> None:
    pipe = Pipe()
    async with running(pipe):
        pipe.write(b"first\n")
        await pipe.until(lambda: pipe.data == b"first\n")
        await trio.testing.wait_all_tasks_blocked()
        pipe.write(b"second\n")
        assert await pipe.reader.read_until(lambda: pipe.data.endswith(b"second\n"))
        assert pipe.data == b"first\nsecond\n"


async def test_the_reader_takes_stdout_back_after_a_lease_nobody_used() -> None:
    pipe = Pipe()
    async with running(pipe) as reader_task:
        pipe.write(b"first\n")
        await pipe.until(lambda: pipe.data == b"first\n")
        assert pipe.reader.holder == "idle"
        # Nobody comes: a notification written a while later is read by the reader task.
        await trio.sleep(LEASE * 4)
        pipe.write(b"notification\n")
        await pipe.until(lambda: pipe.data.endswith(b"notification\n"))
        assert pipe.readers[-1] is reader_task


@pytest.mark.usefixtures("held_lease")
async def test_taking_stdout_back_interrupts_a_caller_waiting_for_an_answer() -> None:
    pipe = Pipe()
    async with running(pipe) as reader_task:
        pipe.write(b"first\n")
        await pipe.until(lambda: pipe.data == b"first\n")
        await trio.testing.wait_all_tasks_blocked()
        finished = []

        async def caller() -> None:
            finished.append(await pipe.reader.read_until(lambda: False))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(caller)
            await trio.testing.wait_all_tasks_blocked()
            assert pipe.reader.holder == "direct"
            pipe.idle = False
            pipe.reader.take_back(interrupt=True)
        assert finished == [True]
        assert pipe.reader.holder == "reader"
        pipe.write(b"late\n")
        await pipe.until(lambda: pipe.data.endswith(b"late\n"))
        assert pipe.readers[-1] is reader_task


@pytest.mark.usefixtures("held_lease")
async def test_the_end_of_the_output_is_reported_once_whoever_reads_it() -> None:
    pipe = Pipe()
    async with running(pipe):
        pipe.write(b"first\n")
        await pipe.until(lambda: pipe.data == b"first\n")
        await trio.testing.wait_all_tasks_blocked()
        pipe.write(b"last\n")
        pipe.close_writer()
        assert await pipe.reader.read_until(lambda: False)
        assert pipe.data == b"first\nlast\n"
        assert pipe.endings == [None]
        assert pipe.reader.eof
        # Over: never lent again.
        assert not await pipe.reader.read_until(lambda: False)
    assert pipe.endings == [None]


async def test_without_the_trick_the_reader_task_reads_everything() -> None:
    """``lend=False`` (a channel with ``pipe_tricks`` off): nothing in flight, still never lent."""
    pipe = Pipe(lend=False)
    async with running(pipe) as reader_task:
        for line in (b"one\n", b"two\n"):
            pipe.write(line)
            await pipe.until(lambda line=line: pipe.data.endswith(line))
            await trio.testing.wait_all_tasks_blocked()
            assert pipe.reader.holder == "reader"
            assert not await pipe.reader.read_until(lambda: True)
        assert pipe.readers == [reader_task, reader_task]


async def test_a_closing_channel_lends_stdout_no_more() -> None:
    pipe = Pipe()
    pipe.reader.closing = True
    async with running(pipe) as reader_task:
        pipe.write(b"one\n")
        await pipe.until(lambda: pipe.data == b"one\n")
        await trio.testing.wait_all_tasks_blocked()
        assert pipe.reader.holder == "reader"
        assert not await pipe.reader.read_until(lambda: True)
        assert pipe.readers == [reader_task]


@pytest.mark.usefixtures("held_lease")
async def test_a_long_answer_read_directly_lets_other_tasks_run() -> None:
    """Chunk after chunk in the caller's task: the other tasks still get their turns."""
    pipe = Pipe()
    async with running(pipe):
        pipe.write(b"first\n")
        await pipe.until(lambda: pipe.data == b"first\n")
        await trio.testing.wait_all_tasks_blocked()
        size = 4 << 20
        ticks = 0

        async def writer() -> None:
            view = memoryview(b"y" * size + b"\n")
            while view:
                try:
                    view = view[os.write(pipe.write_fd, view) :]
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(pipe.write_fd)

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer)
            nursery.start_soon(ticker)
            assert await pipe.reader.read_until(lambda: len(pipe.data) >= len(b"first\n") + size + 1)
            nursery.cancel_scope.cancel()
        assert ticks > 1

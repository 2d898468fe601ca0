"""Tests of `trio_mcp._transports._outbox.Outbox`: what a channel's writer task has yet to write.

Messages queued between two turns of the writer go out as one write, in
order; a request still queued can be withdrawn (it is then never written),
in O(1) however many are queued; the writer sleeps until something comes.
"""

from __future__ import annotations

import trio
import trio.testing

from trio_mcp._transports._outbox import Outbox


def test_everything_queued_is_taken_at_once_in_order():
    outbox = Outbox()
    assert not outbox
    outbox.put(b"1\n", 1)
    outbox.put(b"note\n")
    outbox.put(b"2\n", 2)
    assert outbox
    assert outbox.take() == b"1\nnote\n2\n"
    assert not outbox
    assert outbox.take() == b""


def test_the_length_counts_the_queued_messages_until_taken():
    outbox = Outbox()
    assert len(outbox) == 0
    outbox.put(b"1\n", 1)
    outbox.put(b"note\n")
    outbox.put(b"2\n", 2)
    assert len(outbox) == 3
    assert outbox.withdraw(1)
    # A withdrawn request keeps its place (voided) until the queue is taken.
    assert len(outbox) == 3
    assert outbox.take() == b"note\n2\n"
    assert len(outbox) == 0


def test_a_lone_message_is_taken_as_is():
    outbox = Outbox()
    data = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    outbox.put(data, 1)
    assert outbox.take() is data


def test_a_withdrawn_request_is_never_written():
    outbox = Outbox()
    outbox.put(b"1\n", 1)
    outbox.put(b"2\n", 2)
    outbox.put(b"3\n", 3)
    assert outbox.withdraw(2)
    assert not outbox.withdraw(2)  # once
    assert not outbox.withdraw(9)  # never queued
    assert outbox.take() == b"1\n3\n"
    # Taken, so written: too late to withdraw.
    assert not outbox.withdraw(1)
    outbox.put(b"4\n", 4)
    assert outbox.take() == b"4\n"


def test_withdrawing_everything_leaves_nothing_to_write():
    outbox = Outbox()
    outbox.put(b"1\n", 1)
    assert outbox.withdraw(1)
    assert outbox  # the writer still wakes, and finds nothing to write
    assert outbox.take() == b""
    outbox.put(b"2\n", 2)
    outbox.put(b"3\n", 3)
    assert outbox.withdraw(3)
    assert outbox.take() == b"2\n"


def test_withdrawing_many_is_linear():
    outbox = Outbox()
    count = 50_000
    for n in range(count):
        outbox.put(b"x\n", n)
    assert all(outbox.withdraw(n) for n in range(0, count, 2))
    assert outbox.take() == b"x\n" * (count // 2)


def test_clear_forgets_everything():
    outbox = Outbox()
    outbox.put(b"1\n", 1)
    assert outbox.withdraw(1)
    outbox.put(b"2\n", 2)
    outbox.clear()
    assert not outbox
    assert not outbox.withdraw(2)
    outbox.put(b"3\n", 3)
    assert outbox.take() == b"3\n"


async def test_the_writer_sleeps_until_something_is_queued(autojump_clock):
    outbox = Outbox()
    woke_at: list[float] = []

    async def writer() -> None:
        await outbox.wait()
        woke_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer)
        await trio.sleep(5)
        assert woke_at == []
        outbox.put(b"1\n", 1)
        outbox.put(b"2\n", 2)  # the writer is awake already
    assert woke_at == [5]
    assert outbox.take() == b"1\n2\n"

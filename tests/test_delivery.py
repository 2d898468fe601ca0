"""Tests of `trio_mcp._session.delivery`: where answers and notifications wait for the task that takes them.

A request's `Mailbox`, the connection-wide `Sink` and a subscriber's
`NotificationStream` are each bounded: what does not fit is dropped and
counted, never waited for. The tests run in virtual time, with no session.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trio_mcp._errors import ServerGone
from trio_mcp._session.delivery import (
    CALLBACK_BACKLOG,
    Mailbox,
    NotificationStream,
    Sink,
    call_maybe_async,
    fresh_error,
)


def note(n: int) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}}


async def test_a_mailbox_wakes_its_task_once_finished(autojump_clock):
    box = Mailbox(None)
    async with trio.open_nursery() as nursery:

        async def finish_later() -> None:
            await trio.sleep(3)
            box.finish({"ok": True}, None)
            box.finish({"second": True}, ValueError())  # the first outcome stands

        nursery.start_soon(finish_later)
        while not box.done:
            await box.park()
        assert trio.current_time() == 3
    assert (box.result, box.error, box.is_done()) == ({"ok": True}, None, True)


async def test_a_parked_task_can_be_cancelled_and_park_again(autojump_clock):
    box = Mailbox(None)
    with trio.move_on_after(1):
        await box.park()
    assert box.task is None
    box.finish(None, None)  # nobody parked: nothing to wake
    assert box.done


def test_a_mailbox_holds_a_bounded_backlog_of_notifications():
    box = Mailbox(lambda _: None)
    assert box.notes is None  # made on the first notification only
    assert all(box.put(note(n)) for n in range(CALLBACK_BACKLOG))
    assert not box.put(note(-1))
    assert not box.put(note(-2))
    assert box.dropped == 2
    assert box.notes is not None
    assert [item["params"]["n"] for item in list(box.notes)[:3]] == [0, 1, 2]
    assert len(box.notes) == CALLBACK_BACKLOG


def test_the_sink_keeps_each_notification_with_its_owner_in_order():
    sink: Sink[str] = Sink()
    assert sink.put(note(1), "client a")
    assert sink.put(note(2), None)
    assert list(sink.items) == [(note(1), "client a"), (note(2), None)]
    for n in range(CALLBACK_BACKLOG - 2):
        assert sink.put(note(n), None)
    assert not sink.put(note(-1), None)
    assert sink.dropped == 1
    sink.finish()
    assert sink.done


async def test_a_stream_drops_what_does_not_fit_and_counts_it(autojump_clock):
    stream = NotificationStream(2)
    assert [stream.publish(note(n)) for n in range(4)] == [True, True, False, False]
    assert stream.dropped == 2
    assert [(await stream.__anext__())["params"]["n"] for _ in range(2)] == [0, 1]


async def test_a_stream_ends_quietly_or_with_its_error_after_what_it_holds(autojump_clock):
    quiet = NotificationStream(4)
    quiet.publish(note(1))
    quiet.end(None)
    assert [item["params"]["n"] async for item in quiet] == [1]

    gone = ServerGone("the server exited with code 1", exit_code=1)
    failed = NotificationStream(4)
    failed.publish(note(2))
    failed.end(gone)
    failed.end(None)  # the first reason stands
    assert (await failed.__anext__())["params"] == {"n": 2}
    with pytest.raises(ServerGone) as caught:
        await failed.__anext__()
    assert caught.value is not gone
    assert caught.value.exit_code == 1
    assert failed.error is gone
    assert failed.publish(note(3))  # ended: accepted and ignored


async def test_leaving_a_stream_unsubscribes(autojump_clock):
    async with NotificationStream(4) as stream:
        stream.publish(note(1))
    assert stream.publish(note(2))
    with pytest.raises(StopAsyncIteration):
        await stream.__anext__()


async def test_call_maybe_async_awaits_only_what_is_awaitable():
    seen: list[int] = []

    async def later(n: int) -> int:
        await trio.lowlevel.checkpoint()
        seen.append(n)
        return n * 2

    assert await call_maybe_async(lambda n: n + 1, 1) == 2
    assert await call_maybe_async(later, 4) == 8
    assert seen == [4]


def test_fresh_error_is_a_copy_with_the_cause_and_no_traceback():
    try:
        raise ServerGone("gone", exit_code=2) from OSError("pipe")
    except ServerGone as exc:
        shared = exc
    copy = fresh_error(shared)
    assert copy is not shared
    assert type(copy) is ServerGone
    assert str(copy) == "gone"
    assert copy.exit_code == 2
    assert copy.__cause__ is shared.__cause__
    assert copy.__traceback__ is None
    assert shared.__traceback__ is not None

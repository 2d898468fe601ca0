"""Tests of `trio_mcp._trio.parking`: one task sleeps, another wakes it."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trio_mcp._trio.parking import Parking


async def test_wake_reschedules_the_parked_task(autojump_clock: trio.testing.MockClock) -> None:
    place = Parking()
    woken = []

    async def sleeper() -> None:
        await place.park()
        woken.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sleeper)
        await trio.testing.wait_all_tasks_blocked()
        assert place.task is not None
        await trio.sleep(5)
        place.wake()
        assert place.task is None
    assert woken == [5]


async def test_waking_an_empty_place_does_nothing() -> None:
    place = Parking()
    place.wake()
    assert place.task is None
    # A wake before the park is not remembered: the park sleeps.
    with trio.move_on_after(0.01) as scope:
        await place.park()
    assert scope.cancelled_caught
    assert place.task is None


async def test_the_place_can_be_used_again_after_a_wake_or_a_cancellation(
    autojump_clock: trio.testing.MockClock,
) -> None:
    place = Parking()
    rounds = []

    async def sleeper() -> None:
        for _ in range(3):
            await place.park()
            rounds.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sleeper)
        for _ in range(3):
            await trio.testing.wait_all_tasks_blocked()
            await trio.sleep(1)
            place.wake()
    assert rounds == [1, 2, 3]

    with trio.move_on_after(1):
        await place.park()
    # Cancelled: the place forgot the task, and works again.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(place.park)
        await trio.testing.wait_all_tasks_blocked()
        place.wake()


async def test_a_second_task_cannot_park_at_a_taken_place() -> None:
    place = Parking()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(place.park)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(RuntimeError, match="one task"):
            await place.park()
        place.wake()

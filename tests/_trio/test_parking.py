"""Tests of `trio_mcp._trio.parking`: one task sleeps, another wakes it."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trio_mcp._trio.parking import Parking


@pytest.mark.parametrize("way", ["park", "wait"])
async def test_wake_reschedules_the_parked_task(autojump_clock: trio.testing.MockClock, way: str) -> None:
    place = Parking()
    woken = []

    async def sleeper() -> None:
        await getattr(place, way)()
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


async def test_wait_parks_with_one_frame_fewer_than_park() -> None:
    """`Parking.wait` hands Trio's own wait to the caller: the parked stack has no frame of its own."""
    place = Parking()
    stacks: dict[str, list[str]] = {}

    async def sleeper(way: str) -> None:
        await getattr(place, way)()

    for way in ("park", "wait"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sleeper, way)
            await trio.testing.wait_all_tasks_blocked()
            task = place.task
            assert task is not None
            stacks[way] = [frame.f_code.co_name for frame, _ in task.iter_await_frames()]
            place.wake()
    assert stacks["park"][:3] == ["sleeper", "park", "wait_task_rescheduled"]
    assert stacks["wait"] == [name for name in stacks["park"] if name != "park"]


async def test_wait_claims_the_place_when_called() -> None:
    place = Parking()
    with trio.move_on_after(0.01) as scope:
        await place.wait()
    assert scope.cancelled_caught
    # Cancelled: the place forgot the task.
    assert place.task is None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(place.park)
        await trio.testing.wait_all_tasks_blocked()
        # Taken: the refusal comes at the call, before anything is awaited.
        with pytest.raises(RuntimeError, match="one task"):
            place.wait()
        place.wake()

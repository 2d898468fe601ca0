"""A place for one task to sleep until another wakes it: cheaper than a `trio.Event`.

A request's mailbox, a channel's writer and the session's timer each have
one known task to wake, many times over: `Parking` parks that task with
`trio.lowlevel.wait_task_rescheduled` and wakes it with
`trio.lowlevel.reschedule`, where a `trio.Event` would be made anew for
every wait (it cannot be cleared) and a `trio.lowlevel.ParkingLot` keeps a
table of tasks for one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from collections.abc import Coroutine

__all__ = ["Parking"]

_current_task = trio.lowlevel.current_task
_reschedule = trio.lowlevel.reschedule
_wait_task_rescheduled = trio.lowlevel.wait_task_rescheduled
_SUCCEEDED = trio.lowlevel.Abort.SUCCEEDED


class Parking:
    """One task parks; any task wakes it. Waking an empty place does nothing.

    Attributes:
        task: The task parked here, or `None`.
    """

    __slots__ = ("task",)

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None

    def wake(self) -> None:
        """Reschedule the parked task, if there is one."""
        task = self.task
        if task is not None:
            self.task = None
            _reschedule(task)

    async def park(self) -> None:
        """Sleep until `wake` (a checkpoint: cancellation ends the sleep).

        Raises:
            RuntimeError: Another task is parked here.
        """
        await self.wait()

    def wait(self) -> Coroutine[Any, Any, object]:
        """`park`, one frame shorter: claim the place and return Trio's own wait; ``await place.wait()``.

        Not a coroutine function, so that the parked task's stack is one
        frame shorter each time it is woken: a request parks here once per
        call (``nox -s bench``; docs/design.rst, "Speed tricks"). Await what
        it returns at once, in the task that called it; to start a task
        that parks, give `park` to the nursery.

        Raises:
            RuntimeError: Another task is parked here.
        """
        if self.task is not None:
            raise RuntimeError("another task is parked here; a Parking holds one task")
        self.task = _current_task()
        return _wait_task_rescheduled(self._abort)

    def _abort(self, _: object) -> trio.lowlevel.Abort:
        self.task = None
        return _SUCCEEDED

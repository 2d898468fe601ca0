"""A place for one task to sleep until another wakes it: cheaper than a `trio.Event`."""

from __future__ import annotations

import trio

__all__ = ["Parking"]

_current_task = trio.lowlevel.current_task
_reschedule = trio.lowlevel.reschedule
_wait_task_rescheduled = trio.lowlevel.wait_task_rescheduled
_SUCCEEDED = trio.lowlevel.Abort.SUCCEEDED


class Parking:
    """One task parks; any task wakes it. Waking an empty place does nothing."""

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
        """Sleep until `wake` (a checkpoint: cancellation ends the sleep)."""
        self.task = _current_task()
        await _wait_task_rescheduled(self.abort)

    def abort(self, _: object) -> trio.lowlevel.Abort:
        """The ``abort_fn`` of a park: for a caller that parks inline, one coroutine frame fewer,
        as `park` does (``place.task = current_task()``, then
        ``await wait_task_rescheduled(place.abort)``).
        """
        self.task = None
        return _SUCCEEDED

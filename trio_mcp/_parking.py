"""A place for one task to sleep until another wakes it: cheaper than a `trio.Event`."""

from __future__ import annotations

import trio

__all__ = ["Parking"]


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
            trio.lowlevel.reschedule(task)

    async def park(self) -> None:
        """Sleep until `wake` (a checkpoint: cancellation ends the sleep)."""
        self.task = trio.lowlevel.current_task()

        def abort(_: object) -> trio.lowlevel.Abort:
            self.task = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

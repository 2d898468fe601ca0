"""The messages a channel has yet to write, for its writer task."""

from __future__ import annotations

from collections import deque

from .._parking import Parking

__all__ = ["Outbox"]


class Outbox:
    """Messages waiting for a channel's writer task.

    A request still waiting here can be withdrawn in O(1) (its entry is
    voided where it waits), so that abandoning many requests at once stays
    linear. The writer takes everything queued at once, joined into one
    write.
    """

    __slots__ = ("_entries", "_unsent", "writer")

    def __init__(self) -> None:
        self._entries: deque[list[bytes | None]] = deque()
        self._unsent: dict[int, list[bytes | None]] = {}
        self.writer = Parking()
        """Where the writer task waits for something to write."""

    def __bool__(self) -> bool:
        return bool(self._entries)

    def put(self, data: bytes, request_id: int | None = None) -> None:
        """Queue ``data`` (one of our requests when ``request_id`` is given) and wake the writer."""
        entry: list[bytes | None] = [data]
        self._entries.append(entry)
        if request_id is not None:
            self._unsent[request_id] = entry
        writer = self.writer
        if writer.task is not None:
            # Only the first message of a batch finds the writer asleep.
            writer.wake()

    def withdraw(self, request_id: int) -> bool:
        """Drop request ``request_id`` if it is still waiting here; whether it was."""
        entry = self._unsent.pop(request_id, None)
        if entry is None:
            return False
        entry[0] = None
        return True

    def take(self) -> bytes:
        """Everything queued, joined (``b""`` when all of it was withdrawn); the queue empties."""
        entries = self._entries
        if len(entries) == 1:
            batch = entries[0][0] or b""
        else:
            batch = b"".join([data for (data,) in entries if data is not None])
        entries.clear()
        self._unsent.clear()
        return batch

    def clear(self) -> None:
        """Forget everything queued (the peer is gone)."""
        self._entries.clear()
        self._unsent.clear()

    async def wait(self) -> None:
        """Wait until something is queued."""
        while not self._entries:
            await self.writer.park()

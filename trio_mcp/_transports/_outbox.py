"""The messages a channel has yet to write, for its writer task."""

from __future__ import annotations

from .._trio.parking import Parking

__all__ = ["Outbox"]


class Outbox:
    """Messages waiting for a channel's writer task.

    A request still waiting here can be withdrawn in O(1) (its entry is
    voided where it waits), so that abandoning many requests at once stays
    linear. The writer takes everything queued at once, joined into one
    write.
    """

    __slots__ = ("_entries", "_unsent", "_voided", "writer")

    def __init__(self) -> None:
        # The queued messages, and where each of our requests sits among them.
        self._entries: list[bytes | None] = []
        self._unsent: dict[int, int] = {}
        self._voided = 0
        self.writer = Parking()
        """Where the writer task waits for something to write."""

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __len__(self) -> int:
        """How many messages are queued (withdrawn ones included, until taken)."""
        return len(self._entries)

    def put(self, data: bytes, request_id: int | None = None) -> None:
        """Queue ``data`` (one of our requests when ``request_id`` is given) and wake the writer."""
        entries = self._entries
        if request_id is not None:
            self._unsent[request_id] = len(entries)
        entries.append(data)
        writer = self.writer
        if writer.task is not None:
            # Only the first message of a batch finds the writer asleep.
            writer.wake()

    def withdraw(self, request_id: int) -> bool:
        """Drop request ``request_id`` if it is still waiting here; whether it was."""
        where = self._unsent.pop(request_id, None)
        if where is None:
            return False
        self._entries[where] = None
        self._voided += 1
        return True

    def take(self) -> bytes:
        """Everything queued, joined (``b""`` when all of it was withdrawn); the queue empties."""
        entries = self._entries
        if self._voided:
            batch = b"".join([data for data in entries if data is not None])
            self._voided = 0
        elif len(entries) == 1:
            batch = entries[0] or b""
        else:
            batch = b"".join(entries)  # type: ignore[arg-type]  # nothing was voided
        entries.clear()
        self._unsent.clear()
        return batch

    def clear(self) -> None:
        """Forget everything queued (the peer is gone)."""
        self._entries.clear()
        self._unsent.clear()
        self._voided = 0

    async def wait(self) -> None:
        """Wait until something is queued."""
        while not self._entries:
            await self.writer.wait()

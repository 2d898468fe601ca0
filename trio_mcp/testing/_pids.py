"""The process ids of fake servers: numbers no real process can have.

A test's application code may do with a fake what it does with a real
server, ``os.kill(servers.status(name).pid, signal.SIGKILL)`` included. A
fake's "pid" must then name no process at all, or the test would signal
some unrelated process of the machine it runs on.

Every fake pid is odd and lies in ``[FIRST_FAKE_PID, 2**31)``:

* above the largest pid of every system: Linux's ``PID_MAX_LIMIT`` is
  ``2**22``, macOS's and FreeBSD's pids stay below 100,000;
* within a ``pid_t`` (32 bits), so ``os.kill`` takes the number and answers
  `ProcessLookupError` ("no such process") instead of an overflow;
* odd, since Windows's process ids are multiples of four.
"""

from __future__ import annotations

import itertools

FIRST_FAKE_PID = 2**30 + 1
"""The first fake pid; each new connection of any fake takes the next odd number."""

_LAST = 2**31 - 1
_SPAN = (_LAST - FIRST_FAKE_PID) // 2 + 1
_counter = itertools.count()


def next_fake_pid() -> int:
    """A fresh fake pid, unique within the process (until 2**29 connections wrap around)."""
    return FIRST_FAKE_PID + 2 * (next(_counter) % _SPAN)


def is_fake_pid(pid: int | None) -> bool:
    """Whether ``pid`` is a fake server's process id (`trio_mcp.testing.FakeServer.pid`).

    Such a number names no process on any system: ``os.kill`` with it raises
    `ProcessLookupError`. Application code that signals its servers may ask
    this to skip the fakes of its tests, though it need not::

        pid = servers.status("weather").pid
        if pid is not None and not is_fake_pid(pid):
            os.kill(pid, signal.SIGTERM)
    """
    return isinstance(pid, int) and FIRST_FAKE_PID <= pid <= _LAST and pid % 2 == 1

"""The ``trio-mcp`` command on a pseudo-terminal, as a person at a keyboard runs it.

`Terminal` starts ``python -m trio_mcp ARGS`` with stdin, stdout and stderr
on the slave end of a pty, reads what it writes from the master end, and
types into it. Every wait is bounded by one deadline for the whole run.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

#: How long a command on a terminal may take, from its start to its exit.
LIMIT = 60.0


def _take_terminal() -> None:
    """In the child: a session of its own, with stdin (the pseudo-terminal) as its controlling terminal."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``trio-mcp ARGS`` with stdin, stdout and stderr on a pseudo-terminal."""

    def __init__(
        self, *args: str, environ: dict[str, str], controlling: bool = False, limit: float = LIMIT
    ) -> None:
        """``controlling``: the terminal is the command's controlling terminal, so that Ctrl-C
        typed on it (``\\x03``) sends SIGINT to its process group, as for a person."""
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trio_mcp", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=environ,
            start_new_session=not controlling,
            preexec_fn=_take_terminal if controlling else None,
        )
        os.close(slave)
        self.output = b""
        self.deadline = time.monotonic() + limit

    def _read(self) -> bool:
        """Read what is there (waiting a little); `False` at the end of the output."""
        ready, _, _ = select.select([self.master], [], [], 0.2)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the other end is closed
            return False
        self.output += chunk
        return bool(chunk)

    def expect(self, text: str) -> None:
        """Wait until the output holds ``text`` (counted from the start)."""
        while text.encode() not in self.output:
            assert time.monotonic() < self.deadline, f"no {text!r} in {self.output!r}"
            if not self._read():
                raise AssertionError(f"the output ended without {text!r}: {self.output!r}")

    def expect_count(self, text: str, count: int) -> None:
        """Wait until the output holds ``text`` ``count`` times."""
        while self.output.count(text.encode()) < count:
            assert time.monotonic() < self.deadline, f"not {count} {text!r} in {self.output!r}"
            if not self._read():
                raise AssertionError(f"the output ended: {self.output!r}")

    def send(self, text: str) -> None:
        """Type ``text``."""
        os.write(self.master, text.encode())

    def finish(self) -> tuple[int, str]:
        """Read to the end; return the exit status and the whole output."""
        try:
            while self._read():
                assert time.monotonic() < self.deadline, f"still running: {self.output!r}"
            return self.proc.wait(timeout=max(self.deadline - time.monotonic(), 1)), self.output.decode()
        finally:
            os.close(self.master)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

"""Where ``trio-mcp`` writes everything but the result: stderr, with a progress bar on a terminal."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ._args import PROG
from ._render import number

#: The least time between two frames of the progress bar, in seconds (the
#: first and the last frames are always drawn).
FRAME = 1 / 30


def isatty(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (`False` for anything that cannot say)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Console:
    """Everything the command writes to stderr: messages, the progress bar, questions.

    The progress bar lives on the last line of stderr when stderr is a
    terminal; every other message clears it first and redraws it after.
    """

    def __init__(self, err: Any = None) -> None:
        self.err = err if err is not None else sys.stderr
        """The stream written to (default: ``sys.stderr``)."""
        self.tty = isatty(self.err)
        """Whether it is a terminal (a bar is drawn, rather than lines written)."""
        self.open_line = False
        """Whether the last question ended without a newline (the answer is typed after it)."""
        self._bar = ""
        self._last_frame = -float("inf")
        self._last_plain = ""
        self._unicode = (getattr(self.err, "encoding", "") or "").lower().replace("-", "") in ("utf8",)
        self._spin = 0

    def _write(self, text: str) -> None:
        try:
            self.err.write(text)
            self.err.flush()
        except (OSError, ValueError):
            pass

    def say(self, line: str) -> None:
        """Write one message line to stderr, around the progress bar."""
        if self._bar:
            self._write("\r\x1b[K" + line + "\n" + self._bar)
        else:
            self._write(line + "\n")

    def error(self, line: str) -> None:
        """Write an error line, prefixed with the program's name."""
        self.say(f"{PROG}: {line}")

    def clear(self) -> None:
        """Remove the progress bar (at the end, or before asking a question)."""
        if self._bar:
            self._bar = ""
            self._write("\r\x1b[K")

    def _width(self) -> int:
        """The terminal's width: ``COLUMNS``, else what the terminal says, else 80."""
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(self.err.fileno()).columns
            except (AttributeError, ValueError, OSError):
                columns = 0
        return columns if columns > 0 else 80

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Show a progress notification: redraw the bar, or write a plain line."""
        amount = number(progress)
        if total is not None and total > 0:
            fraction = min(max(progress / total, 0.0), 1.0)
            amount = f"{amount}/{number(total)}"
        else:
            fraction = None
        if not self.tty:
            line = f"progress: {amount}" + (f" ({fraction:.0%})" if fraction is not None else "")
            line += f" {message}" if message else ""
            if line != self._last_plain:
                self._last_plain = line
                self._write(line + "\n")
            return
        now = time.monotonic()
        if now - self._last_frame < FRAME and fraction != 1.0:
            return
        self._last_frame = now
        width = max(self._width() - 1, 10)
        if fraction is not None:
            cells = 20 if width >= 50 else 10
            done = round(fraction * cells)
            full, empty = ("\u2588", "\u2591") if self._unicode else ("#", "-")
            bar = f"[{full * done}{empty * (cells - done)}] {fraction:4.0%} {amount}"
        else:
            frames = "|/-\\"
            self._spin += 1
            bar = f"{frames[self._spin % 4]} {amount}"
        if message:
            bar += f" {message}"
        self._bar = "\r" + bar[:width] + "\x1b[K"
        self._write(self._bar)

    def ask(self, text: str) -> None:
        """Write (part of) a question for the terminal; it may end without a newline."""
        self.clear()
        # Before the write: a Ctrl-C right after it must still end the line.
        self.open_line = not text.endswith("\n")
        self._write(text)

    def end_line(self) -> None:
        """End a line a question left open (when interrupted while waiting for the answer)."""
        if self.open_line:
            self.open_line = False
            self._write("\n")

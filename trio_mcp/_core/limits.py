"""Rate limits for what a misbehaving server makes us say, without a clock.

A server that prints ``y`` forever makes every line a diagnostic: hundreds
of thousands a second. `LogLimiter` lets a burst through, then a steady
trickle, and counts the rest, so that the log says what happened (and how
often) without drowning. Time is passed in, so the rule is pure.
"""

from __future__ import annotations

from typing import Final

__all__ = ["LogLimiter"]

#: Diagnostics let through at once, before the limit applies.
BURST: Final = 20
#: Diagnostics let through per second once the burst is spent.
RATE: Final = 2.0


class LogLimiter:
    """A token bucket over diagnostics: ``burst`` at once, then ``rate`` a second.

    Args:
        burst: How many diagnostics pass in a row before the limit applies.
        rate: How many pass per second once the burst is spent.
    """

    __slots__ = ("_burst", "_last", "_rate", "_since", "_suppressed", "_tokens")

    def __init__(self, burst: int = BURST, rate: float = RATE) -> None:
        if burst < 1 or not rate > 0:
            raise ValueError("burst must be >= 1 and rate > 0")
        self._burst = burst
        self._rate = rate
        self._tokens = float(burst)
        self._last: float | None = None
        self._suppressed = 0
        self._since = 0.0

    @property
    def suppressed(self) -> int:
        """How many diagnostics were held back since the last one let through."""
        return self._suppressed

    def admit(self, now: float) -> tuple[bool, str | None]:
        """Decide on one diagnostic at time ``now`` (seconds, any monotonic origin).

        Returns whether to emit it, and, when diagnostics were suppressed
        before it, a summary line to emit first.
        """
        last = self._last
        if last is not None and now > last:
            self._tokens = min(float(self._burst), self._tokens + (now - last) * self._rate)
        self._last = now if last is None or now > last else last
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True, self.flush(now)
        if self._suppressed == 0:
            self._since = now
        self._suppressed += 1
        return False, None

    def flush(self, now: float) -> str | None:
        """The summary of what was suppressed (and forget it), or `None` when nothing was."""
        count = self._suppressed
        if not count:
            return None
        self._suppressed = 0
        seconds = max(0.0, now - self._since)
        return f"{count} more diagnostics like the ones above were suppressed in {seconds:.1f} s"

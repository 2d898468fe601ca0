"""When a server of a group is started again: the restart policy, as pure arithmetic.

Nothing here reads a clock, sleeps or imports Trio: the group tells a
`RestartTracker` what happened and when (``now``, in seconds on any
monotonic clock), and the tracker says whether to start the server again,
and after how long. Tests drive it with made-up times and a seeded random
number generator.

The defaults, and why (the numbers other supervisors use are in brackets):

* ``initial_delay=1`` s, ``max_delay=30`` s, doubling: an interactive
  client wants a crashed server back quickly, and one that keeps crashing
  should cost next to nothing [Claude Code's reconnects: 1, 2, 4, 8, 16 s;
  Kubernetes: 10 s doubling to 5 min, too slow for a person waiting;
  systemd: 100 ms, meant for services that start in milliseconds].
* ``jitter="decorrelated"``: each delay is drawn between ``initial_delay``
  and three times the previous one (capped), so servers that crashed
  together (a laptop waking up, a shared dependency gone) come back spread
  over an interval that widens with every attempt, and never sooner than
  ``initial_delay``: a crash loop costs at most one start per second per
  server.
* ``reset_after=60`` s: a server that ran that long counts as healthy, and
  its next crash starts the delays from the beginning again [Kubernetes: 10
  minutes, for batch workloads].
* ``max_restarts=5`` within ``window=300`` s, or ``max_start_failures=5``
  starts in a row that never became ready: the server is marked failed and
  left alone until `ServerGroup.restart` [vscode-languageclient: 5 crashes
  in 3 minutes; systemd: 5 starts in 10 s; Erlang/OTP: 1 in 5 s, Elixir: 3
  in 5 s, both for in-process restarts that cost microseconds].
* ``mode="always"``: any exit the group did not ask for is unexpected,
  exit status 0 included (the MCP specification's stdio transport: a
  client *should* restart a server that exits unexpectedly).
"""

from __future__ import annotations

import math
import random
from typing import Any, Literal, TypeAlias

import attrs

__all__ = ["Decision", "Jitter", "RestartMode", "RestartPolicy", "RestartTracker"]

RestartMode: TypeAlias = Literal["always", "on-failure", "never"]
"""Which exits are followed by a restart."""

Jitter: TypeAlias = Literal["decorrelated", "full", "none"]
"""How the delays are spread."""


def _seconds(*, zero: bool) -> Any:
    def check(_: Any, attribute: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{attribute.name} must be a number of seconds, not {value!r}")
        if math.isnan(value) or value == math.inf or value < 0 or (value == 0 and not zero):
            rule = ">= 0" if zero else "> 0"
            raise ValueError(f"{attribute.name} must be a finite number of seconds {rule}, not {value!r}")

    return check


def _count(_: Any, attribute: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an integer >= 0, not {value!r}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, not {value!r}")


@attrs.frozen(kw_only=True)
class RestartPolicy:
    """How a server group restarts a server that stopped without being asked to.

    The delays grow exponentially from ``initial_delay`` to ``max_delay``,
    spread by ``jitter``; they start again from the beginning once the
    server has been ready for ``reset_after`` seconds. A server restarted
    ``max_restarts`` times within ``window`` seconds, or that failed to start
    ``max_start_failures`` times in a row, is marked ``"failed"`` instead.
    See :doc:`groups` for the reasoning behind each default.

    Attributes:
        mode: ``"always"`` (any exit the group did not ask for, exit status
            0 included), ``"on-failure"`` (not after a clean exit with status
            0) or ``"never"``.
        initial_delay: The first delay, in seconds, and the least one with
            ``"decorrelated"`` jitter.
        max_delay: The longest delay, in seconds.
        jitter: ``"decorrelated"``: each delay is drawn uniformly between
            ``initial_delay`` and three times the previous delay;
            ``"full"``: uniformly between 0 and the exponential delay;
            ``"none"``: exactly ``initial_delay * 2**n``.
        reset_after: Seconds of being ready after which the delays start
            from the beginning again.
        max_restarts: The most restarts allowed within ``window`` seconds.
        window: The period, in seconds, that ``max_restarts`` counts over.
        max_start_failures: The most starts in a row that may fail (a crash,
            a refused handshake, ``startup_timeout`` running out) before the
            server is marked failed; 0 for no such limit.
    """

    mode: RestartMode = attrs.field(
        default="always", validator=attrs.validators.in_(("always", "on-failure", "never"))
    )
    initial_delay: float = attrs.field(default=1.0, validator=_seconds(zero=True))
    max_delay: float = attrs.field(default=30.0, validator=_seconds(zero=True))
    jitter: Jitter = attrs.field(
        default="decorrelated", validator=attrs.validators.in_(("decorrelated", "full", "none"))
    )
    reset_after: float = attrs.field(default=60.0, validator=_seconds(zero=True))
    max_restarts: int = attrs.field(default=5, validator=_count)
    window: float = attrs.field(default=300.0, validator=_seconds(zero=True))
    max_start_failures: int = attrs.field(default=5, validator=_count)

    def __attrs_post_init__(self) -> None:
        if self.max_delay < self.initial_delay:
            raise ValueError(
                f"max_delay ({self.max_delay!r}) must be at least initial_delay ({self.initial_delay!r})"
            )


@attrs.frozen
class Decision:
    """What to do after a server stopped on its own.

    Attributes:
        restart: Whether to start it again.
        delay: Seconds to wait first (0 when not restarting).
        reason: Why not, when ``restart`` is false (for the failed state).
    """

    restart: bool
    delay: float = 0.0
    reason: str = ""


class RestartTracker:
    """The restart history of one server, and the policy's verdicts on it.

    Args:
        policy: The policy to apply.
        rng: Where the jitter comes from (a seeded `random.Random` makes the
            delays reproducible); by default a generator of its own.
    """

    __slots__ = (
        "_attempt",
        "_previous",
        "_ready_since",
        "_rng",
        "_start_failures",
        "_times",
        "policy",
        "restarts",
    )

    def __init__(self, policy: RestartPolicy, rng: random.Random | None = None) -> None:
        self.policy = policy
        self._rng = rng if rng is not None else random.Random()
        self._times: list[float] = []
        self._attempt = 0
        self._previous = policy.initial_delay
        self._ready_since: float | None = None
        self._start_failures = 0
        self.restarts = 0
        """How many restarts were granted in all."""

    def ready(self, now: float) -> None:
        """The server finished starting at ``now``."""
        self._ready_since = now
        self._start_failures = 0

    def reset(self) -> None:
        """Forget the history (a restart asked for by hand)."""
        self._times.clear()
        self._attempt = 0
        self._previous = self.policy.initial_delay
        self._ready_since = None
        self._start_failures = 0

    def stopped(self, now: float, *, clean: bool, retryable: bool = True) -> Decision:
        """The server stopped at ``now`` without being asked to: restart it?

        Args:
            now: When it stopped.
            clean: It exited on its own with status 0.
            retryable: `False` when starting it again cannot help (its
                command does not exist, it speaks no common protocol
                version).
        """
        policy = self.policy
        was_ready = self._ready_since is not None
        if was_ready:
            assert self._ready_since is not None
            if now - self._ready_since >= policy.reset_after:
                self._attempt = 0
                self._previous = policy.initial_delay
        else:
            self._start_failures += 1
        self._ready_since = None
        if self._times and self._times[0] <= now - policy.window:
            self._times = [time for time in self._times if time > now - policy.window]
        refusal = self._refusal(now, clean=clean, retryable=retryable, start_failures=self._start_failures)
        if refusal:
            return Decision(False, reason=refusal)
        delay = self._delay()
        self._times.append(now + delay)
        self.restarts += 1
        return Decision(True, delay)

    def would_restart(self, now: float, *, clean: bool, retryable: bool = True) -> bool:
        """What `stopped` would decide for a server that was ready, without recording anything."""
        failures = self._start_failures + (0 if self._ready_since is not None else 1)
        return not self._refusal(now, clean=clean, retryable=retryable, start_failures=failures)

    def _refusal(self, now: float, *, clean: bool, retryable: bool, start_failures: int) -> str:
        """Why the policy would not restart the server now, or ``""``."""
        policy = self.policy
        if not retryable:
            return "starting it again cannot help"
        if policy.mode == "never":
            return "the restart policy is 'never'"
        if policy.mode == "on-failure" and clean:
            return "it exited with status 0 and the restart policy is 'on-failure'"
        if policy.max_start_failures and start_failures >= policy.max_start_failures:
            return f"it failed to start {start_failures} times in a row"
        recent = sum(1 for time in self._times if time > now - policy.window)
        if recent >= policy.max_restarts:
            return f"it was restarted {recent} times within {policy.window:g} s"
        return ""

    def _delay(self) -> float:
        policy = self.policy
        attempt = self._attempt
        self._attempt += 1
        ceiling = min(policy.max_delay, policy.initial_delay * 2.0 ** min(attempt, 64))
        if policy.jitter == "none":
            return ceiling
        if policy.jitter == "full":
            return self._rng.uniform(0.0, ceiling)
        high = min(policy.max_delay, self._previous * 3.0)
        delay = min(
            policy.max_delay, self._rng.uniform(policy.initial_delay, max(high, policy.initial_delay))
        )
        self._previous = max(delay, policy.initial_delay)
        return delay

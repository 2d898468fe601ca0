"""Tests of `trio_mcp._core.limits.LogLimiter`: a token bucket over diagnostics, without a clock.

A misbehaving server can make every line it writes a diagnostic. The unit
tests pin down the burst, the steady rate and the summary of what was held
back; the property checks, for any sequence of times, that no more is let
through than the bucket allows and that every diagnostic is either let
through or counted in a summary.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from trio_mcp._core.limits import BURST, RATE, LogLimiter


def test_a_burst_passes_then_the_rest_is_held_back():
    limiter = LogLimiter(burst=3, rate=1.0)
    assert [limiter.admit(0.0) for _ in range(3)] == [(True, None)] * 3
    assert limiter.admit(0.0) == (False, None)
    assert limiter.admit(0.0) == (False, None)
    assert limiter.suppressed == 2


def test_time_refills_the_bucket_and_the_next_one_carries_a_summary():
    limiter = LogLimiter(burst=1, rate=2.0)
    assert limiter.admit(10.0) == (True, None)
    assert limiter.admit(10.1) == (False, None)
    assert limiter.admit(10.2) == (False, None)
    admitted, summary = limiter.admit(10.6)
    assert admitted
    assert summary == "2 more diagnostics like the ones above were suppressed in 0.5 s"
    assert limiter.suppressed == 0


def test_the_bucket_never_holds_more_than_the_burst():
    limiter = LogLimiter(burst=2, rate=100.0)
    assert limiter.admit(0.0)[0]
    # An hour of silence refills two tokens, not 360,000.
    assert [limiter.admit(3600.0)[0] for _ in range(3)] == [True, True, False]


def test_a_clock_going_back_refills_nothing():
    limiter = LogLimiter(burst=1, rate=1.0)
    assert limiter.admit(5.0)[0]
    assert not limiter.admit(1.0)[0]
    assert not limiter.admit(5.5)[0]
    assert limiter.admit(6.0)[0]


def test_flush_says_what_was_held_back_once():
    limiter = LogLimiter(burst=1, rate=1.0)
    assert limiter.flush(0.0) is None
    limiter.admit(0.0)
    limiter.admit(0.25)
    assert limiter.flush(1.0) == "1 more diagnostics like the ones above were suppressed in 0.8 s"
    assert limiter.flush(2.0) is None


def test_the_defaults():
    limiter = LogLimiter()
    assert sum(limiter.admit(0.0)[0] for _ in range(100)) == BURST
    assert sum(limiter.admit(10.0)[0] for _ in range(100)) == int(10 * RATE)


@pytest.mark.parametrize(("burst", "rate"), [(0, 1.0), (-1, 1.0), (1, 0.0), (1, -2.0), (1, float("nan"))])
def test_nonsense_limits_are_refused(burst, rate):
    with pytest.raises(ValueError, match="burst must be"):
        LogLimiter(burst=burst, rate=rate)


@pytest.mark.property
@given(
    burst=st.integers(1, 10),
    rate=st.floats(0.1, 50.0),
    steps=st.lists(st.floats(0.0, 5.0), max_size=200),
)
def test_nothing_is_lost_and_the_bucket_is_respected(burst, rate, steps):
    """Each diagnostic is let through or counted in exactly one summary; at most burst + rate * t pass."""
    limiter = LogLimiter(burst=burst, rate=rate)
    now = 0.0
    passed = summarised = 0
    for step in steps:
        now += step
        admitted, summary = limiter.admit(now)
        passed += admitted
        if summary is not None:
            assert admitted
            summarised += int(summary.split(" ", 1)[0])
    assert passed + summarised + limiter.suppressed == len(steps)
    assert passed <= burst + rate * now + 1e-9

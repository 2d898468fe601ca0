"""Fuzz `trio_mcp._core.sse.EventParser` with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_core/test_sse.py``
through their ``hypothesis.fuzz_one_input`` hooks, so atheris searches for
inputs while Hypothesis turns its bytes into well-formed examples and checks
the same assertions as the test suite. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_sse.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_sse.py.
TARGETS = (
    "test_chunking_invariance_and_bounded_memory",
    "test_feed_never_raises",
    "test_each_byte_is_searched_once_per_line_end",
)


if __name__ == "__main__":
    run("fuzz_sse.py", "tests._core.test_sse", TARGETS)

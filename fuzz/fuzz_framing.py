"""Fuzz `trio_mcp._core.framing.LineFramer` with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_core/test_framing.py``
through their ``hypothesis.fuzz_one_input`` hooks, so atheris searches for
inputs while Hypothesis turns its bytes into well-formed examples and checks
the same assertions as the test suite. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_framing.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_framing.py.
TARGETS = (
    "test_chunking_invariance_and_bounded_memory",
    "test_feed_never_raises",
    "test_each_byte_is_searched_once",
)


if __name__ == "__main__":
    run("fuzz_framing.py", "tests._core.test_framing", TARGETS)

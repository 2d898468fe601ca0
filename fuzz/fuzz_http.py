"""Fuzz the pure Streamable HTTP core (`trio_mcp._core.streamable_http`) with atheris.

The harness drives the Hypothesis properties of ``tests/_core/test_streamable_http.py``
through their ``hypothesis.fuzz_one_input`` hooks: atheris searches for hostile
response sequences while Hypothesis turns its bytes into them and checks the
same promises as the test suite (answers only to calls in flight on their own
exchange, none twice, one renewal at a time, bounded memory). See
``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_http.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_streamable_http.py.
TARGETS = (
    "test_hostile_sequences_keep_every_promise",
    "test_memory_is_bounded_over_many_events",
)


if __name__ == "__main__":
    run("fuzz_http.py", "tests._core.test_streamable_http", TARGETS)

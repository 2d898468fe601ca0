"""Fuzz `trio_mcp._core.jsonrpc.Connection` and its JSON decoder with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_core/test_jsonrpc.py``
and ``tests/_core/test_codec.py`` through their ``hypothesis.fuzz_one_input``
hooks, so atheris searches for inputs while Hypothesis turns its bytes into
well-formed examples and checks the same assertions as the test suite. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_protocol.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_jsonrpc.py and tests/_core/test_codec.py.
TARGETS = (
    "test_error_closure",
    "test_any_json_value_is_received_without_raising",
    "test_encode_is_one_line_that_round_trips",
    "test_decode_reads_what_json_writes",
    "test_decode_agrees_with_json_on_any_bytes",
    "test_answer_json_writes_is_answered_exactly",
    "test_encode_writes_any_integer_exactly",
)


if __name__ == "__main__":
    run("fuzz_protocol.py", ("tests._core.test_jsonrpc", "tests._core.test_codec"), TARGETS)

"""Fuzz the readers and rules of MCP tasks (`trio_mcp._core.tasks`) with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_core/test_tasks.py``
through their ``hypothesis.fuzz_one_input`` hooks: any reply a server sends
about a task, in either era, gives a task or a `ProtocolError`; the state
machine, the poll delay, the input ledger and the follower keep their promises. See
``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_tasks.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_tasks.py.
TARGETS = (
    "test_any_reply_is_read_or_refused_with_a_protocol_error",
    "test_the_state_machine_never_leaves_a_terminal_state",
    "test_the_poll_delay_is_always_between_the_floor_and_the_cap",
    "test_no_key_is_taken_twice",
    "test_the_follower_always_ends_within_its_rules",
)


if __name__ == "__main__":
    run("fuzz_tasks.py", "tests._core.test_tasks", TARGETS)

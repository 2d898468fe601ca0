"""Fuzz `trio_mcp._protocol.Connection` with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/test_protocol.py``
through their ``hypothesis.fuzz_one_input`` hooks, so atheris searches for
inputs while Hypothesis turns its bytes into well-formed examples and checks
the same assertions as the test suite. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_protocol.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The properties fuzzed, from tests/test_protocol.py.
TARGETS = (
    "test_error_closure",
    "test_any_json_value_is_received_without_raising",
    "test_encode_is_one_line_that_round_trips",
)


def main() -> None:
    try:
        import atheris
    except ImportError:
        sys.exit(
            "fuzz_protocol.py needs atheris, a coverage-guided fuzzer: `pip install atheris`.\n"
            "Without it, run the same properties longer with Hypothesis alone:\n"
            "    HYPOTHESIS_PROFILE=fuzz pytest -m property"
        )
    from hypothesis import settings

    # The fuzzer, not a per-example clock, decides what is too slow.
    settings.register_profile("atheris", deadline=None)
    settings.load_profile("atheris")
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    with atheris.instrument_imports(include=["trio_mcp"]):
        import test_protocol

    chosen = os.environ.get("FUZZ_TARGET")
    names = (chosen,) if chosen else TARGETS
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        sys.exit(f"unknown FUZZ_TARGET {unknown[0]!r}; choose one of: {', '.join(TARGETS)}")
    targets = [getattr(test_protocol, name).hypothesis.fuzz_one_input for name in names]

    def fuzz_one(data: bytes) -> None:
        # The first byte picks the property; the rest drives Hypothesis.
        if not data:
            return
        targets[data[0] % len(targets)](data[1:])

    atheris.Setup(sys.argv, fuzz_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

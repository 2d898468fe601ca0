"""The shared body of the atheris harnesses in this folder.

Each harness names a test module and the Hypothesis properties in it; this
module instruments ``trio_mcp``, imports the tests and hands atheris a
function that feeds its bytes to the properties' ``fuzz_one_input`` hooks.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(script: str, module: str | tuple[str, ...], targets: tuple[str, ...]) -> None:
    """Fuzz ``targets`` (test names in the test module ``module``, or in one of several) until stopped.

    A test module is named as pytest imports it, e.g. ``tests._core.test_framing``
    for ``tests/_core/test_framing.py``.

    ``FUZZ_TARGET=<test name>`` picks one property instead of all of them.
    """
    try:
        import atheris
    except ImportError:
        sys.exit(
            f"{script} needs atheris, a coverage-guided fuzzer: `pip install atheris`.\n"
            "Without it, run the same properties longer with Hypothesis alone:\n"
            "    HYPOTHESIS_PROFILE=fuzz pytest -m property"
        )
    from hypothesis import settings

    # The fuzzer, not a per-example clock, decides what is too slow.
    settings.register_profile("atheris", deadline=None)
    settings.load_profile("atheris")
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    modules = (module,) if isinstance(module, str) else module
    with atheris.instrument_imports(include=["trio_mcp"]):
        tests = [importlib.import_module(name) for name in modules]

    chosen = os.environ.get("FUZZ_TARGET")
    names = (chosen,) if chosen else targets
    unknown = [name for name in names if name not in targets]
    if unknown:
        sys.exit(f"unknown FUZZ_TARGET {unknown[0]!r}; choose one of: {', '.join(targets)}")
    hooks = [
        next(getattr(found, name) for found in tests if hasattr(found, name)).hypothesis.fuzz_one_input
        for name in names
    ]

    def fuzz_one(data: bytes) -> None:
        # The first byte picks the property; the rest drives Hypothesis.
        if not data:
            return
        hooks[data[0] % len(hooks)](data[1:])

    atheris.Setup(sys.argv, fuzz_one)
    atheris.Fuzz()

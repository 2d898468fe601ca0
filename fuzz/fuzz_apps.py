"""Fuzz the MCP Apps host rules and app bridge with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_core/test_apps.py``
(the Content-Security-Policy never gains a directive nor a source that was
not a declared origin), ``tests/_core/test_app_bridge.py`` (whatever a view
sends, the host never speaks before the view is initialized, and every
answer is a result or an error) and ``tests/_core/test_extensions.py``
through their ``hypothesis.fuzz_one_input`` hooks. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_apps.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed.
TARGETS = (
    "test_declared_sources_never_add_a_directive_nor_a_keyword",
    "test_the_host_never_speaks_first_whatever_the_view_sends",
    "test_an_accepted_identifier_has_one_slash_and_no_space",
)


if __name__ == "__main__":
    run(
        "fuzz_apps.py",
        ("tests._core.test_apps", "tests._core.test_app_bridge", "tests._core.test_extensions"),
        TARGETS,
    )

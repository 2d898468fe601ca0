"""Fuzz the configuration reader (`trio_mcp.parse_config`) with atheris, for as long as you like.

The harness drives the Hypothesis properties of ``tests/_config/test_config.py``
through their ``hypothesis.fuzz_one_input`` hooks: any JSON value or text
read as a configuration gives a `LoadedConfig` or a `ConfigError`, never
another exception. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_config.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_config/test_config.py.
TARGETS = (
    "test_any_json_value_gives_a_config_or_a_config_error",
    "test_any_text_gives_a_config_or_a_config_error",
    "test_jsonc_stripping_keeps_plain_json",
    "test_text_without_references_is_unchanged",
    "test_expansion_is_one_pass",
    "test_any_overrides_give_a_config_whose_bad_entries_are_invalid",
)


if __name__ == "__main__":
    run("fuzz_config.py", "tests._config.test_config", TARGETS)

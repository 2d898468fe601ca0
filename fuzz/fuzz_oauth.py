"""Fuzz the decisions of MCP authorization (`trio_mcp._core.oauth`) with atheris.

The harness drives the Hypothesis properties of ``tests/test_core_oauth.py``
through their ``hypothesis.fuzz_one_input`` hooks: whatever metadata,
registration or token response a server sends, the core raises nothing but
`AuthorizationFailed` and puts no secret in a message; step-up scopes are
the union or nothing. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_oauth.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/test_core_oauth.py.
TARGETS = (
    "test_metadata_parsers_raise_only_authorization_failed",
    "test_token_parser_raises_only_authorization_failed",
    "test_token_values_never_reach_an_error_message",
    "test_step_up_is_the_union_or_nothing",
    "test_canonical_resource_is_idempotent_and_clean",
    "test_pkce_verifier_has_the_rfc_form_and_all_the_entropy",
)


if __name__ == "__main__":
    run("fuzz_oauth.py", "test_core_oauth", TARGETS)

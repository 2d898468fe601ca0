"""Fuzz the decisions of MCP authorization (`trio_mcp._core.oauth`) with atheris.

The harness drives the Hypothesis properties of ``tests/_core/test_oauth.py``
and ``tests/_core/test_oauth_flow.py`` through their
``hypothesis.fuzz_one_input`` hooks: whatever metadata, registration or
token response a server sends, the core raises nothing but
`AuthorizationFailed` and puts no secret in a message; step-up scopes are
the union or nothing; and over any server behaviour and any sequence of
requests, the flow's budgets hold (logins per request, one refresh per
expiry, scopes that only grow). See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_oauth.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_oauth.py and tests/_core/test_oauth_flow.py.
TARGETS = (
    "test_metadata_parsers_raise_only_authorization_failed",
    "test_token_parser_raises_only_authorization_failed",
    "test_token_values_never_reach_an_error_message",
    "test_step_up_is_the_union_or_nothing",
    "test_canonical_resource_is_idempotent_and_clean",
    "test_pkce_verifier_has_the_rfc_form_and_all_the_entropy",
    # tests/_core/test_oauth_flow.py
    "test_logins_per_request_are_bounded",
    "test_each_refresh_token_is_presented_once_at_most",
    "test_scopes_asked_only_grow",
    "test_a_refused_refresh_leads_to_one_login_at_most",
)


if __name__ == "__main__":
    run("fuzz_oauth.py", ("tests._core.test_oauth", "tests._core.test_oauth_flow"), TARGETS)

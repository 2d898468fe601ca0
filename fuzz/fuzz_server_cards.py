"""Fuzz the server-card readers (`trio_mcp.server_cards`, experimental) with atheris, for as long as you like.

The harness drives the Hypothesis properties of
``tests/_core/test_server_cards.py`` through their
``hypothesis.fuzz_one_input`` hooks: any catalog, card, body, remote or
redirect gives its value or a `ServerCardError`, never another exception;
entries stay on their catalog's origin unless allowed; a header's value
never reaches a message. See ``fuzz/README.rst``.

Run it from the repository root::

    python fuzz/fuzz_server_cards.py [libFuzzer options] [corpus directory ...]

``FUZZ_TARGET=<test name>`` fuzzes one property instead of all of them.
"""

from __future__ import annotations

from _harness import run

#: The properties fuzzed, from tests/_core/test_server_cards.py.
TARGETS = (
    "test_any_card_document_gives_a_card_or_a_card_error",
    "test_any_catalog_document_gives_a_catalog_or_a_card_error",
    "test_any_body_gives_an_object_or_a_card_error",
    "test_any_remote_gives_a_checked_url_and_headers_or_a_card_error",
    "test_no_value_given_for_a_remote_reaches_a_message",
    "test_any_redirect_stays_on_its_origin_or_is_refused",
)


if __name__ == "__main__":
    run("fuzz_server_cards.py", "tests._core.test_server_cards", TARGETS)

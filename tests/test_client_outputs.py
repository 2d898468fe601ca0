"""The client's output checks (`trio_mcp._client.outputs`): which results are checked, and how.

End-to-end behaviour (reports, strict failures, the listing strict mode makes)
is in test_output_schema.py, over a fake server; these tests pin the one
condition every kind of result goes through, without any I/O.
"""

from __future__ import annotations

import pytest
import trio

from trio_mcp import OutputValidationError, ServerGone
from trio_mcp._client.outputs import OutputChecks
from trio_mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def listing(made, listed):
    tools = [
        Tool(name=name, input_schema={"type": "object"}, output_schema=schema)
        for name, schema in listed.items()
    ]
    made.schemas.saw_page(ListToolsResult(tools=tools), tools, first=True)


def checks(mode, version="2025-11-25", listed=None, served=None):
    """Checks in ``mode``, with the tools ``listed`` already; the server lists ``served``."""
    logged = []
    lists = []

    async def list_tools():
        await trio.lowlevel.checkpoint()
        lists.append(1)
        if served is not None:
            listing(made, served)

    made = OutputChecks(mode, server="server 'x'", list_tools=list_tools, log=logged.append)
    made.settle(version)
    if listed is not None:
        listing(made, listed)
    return made, logged, lists


def result(structured=None, *, is_error=False):
    return CallToolResult(content=[TextContent(text="t")], structured_content=structured, is_error=is_error)


@pytest.mark.parametrize(
    ("mode", "version", "listed", "is_error", "wanted"),
    [
        ("warn", "2025-11-25", {"t": SCHEMA}, False, True),
        ("strict", "2025-11-25", None, False, True),  # strict lists the tools first
        ("warn", "2025-11-25", None, False, False),  # no listing: nothing to check against
        ("warn", "2025-11-25", {"t": SCHEMA}, True, False),  # a tool error is never checked
        ("off", "2025-11-25", {"t": SCHEMA}, False, False),
        ("strict", "2025-03-26", {"t": SCHEMA}, False, False),  # no outputSchema before 2025-06-18
        ("warn", "2026-07-28", {"t": SCHEMA}, False, True),
    ],
)
def test_which_results_are_checked(mode, version, listed, is_error, wanted):
    made, _, _ = checks(mode, version, listed)
    assert made.wants(result({"n": 1}, is_error=is_error)) is wanted


async def test_a_result_not_wanted_is_left_alone():
    made, logged, lists = checks("warn", listed={"t": SCHEMA})
    await made.check("t", result({"n": "one"}, is_error=True))
    assert logged == lists == []


async def test_warn_reports_a_mismatch_once_per_listing():
    made, logged, _ = checks("warn", listed={"t": SCHEMA})
    await made.check("t", result({"n": "one"}))
    await made.check("u", result({"n": "one"}))
    await made.check("u", result({"n": "one"}))
    assert len(logged) == 2
    assert "does not match its outputSchema at $.n" in logged[0]
    assert "tool 'u' of server 'x' is not in its tool listing" in logged[1]


async def test_strict_lists_the_tools_once_then_raises():
    made, _, lists = checks("strict", served={"t": SCHEMA})
    with pytest.raises(OutputValidationError, match=r"at \$\.n"):
        await made.check("t", result({"n": "one"}))
    with pytest.raises(OutputValidationError, match="has no structuredContent"):
        await made.check("t", result(None))
    await made.check("t", result({"n": 1}))
    assert lists == [1]


async def test_strict_whose_listing_fails_lists_no_more_until_the_tools_change():
    logged = []
    lists = []

    async def list_tools():
        await trio.lowlevel.checkpoint()
        lists.append(1)
        raise ServerGone("gone")

    made = OutputChecks("strict", server="server 'x'", list_tools=list_tools, log=logged.append)
    made.settle("2025-11-25")
    await made.check("t", result({"n": "one"}))
    await made.check("t", result({"n": "one"}))
    assert lists == [1]
    assert logged == ["cannot list the tools of server 'x' to learn their output schemas: gone"]
    made.schemas.forget()
    await made.check("t", result({"n": "one"}))
    assert lists == [1, 1]

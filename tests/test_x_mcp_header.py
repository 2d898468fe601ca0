"""x-mcp-header (SEP-2243) against a real server process (tests/servers/http_server.py).

The rules themselves are tested in test_param_headers.py; here, what a
2026-07-28 server sees: a tool whose annotation is invalid never reaches the
caller's listing (and is said to be left out, naming the tool and the rule).
"""

from __future__ import annotations

import pytest
import trio
from process_support import hostile_server

import trio_mcp

#: The guard around each test's exchanges, in seconds (generous: machines are noisy).
LIMIT = 30


@pytest.fixture(scope="module")
def modern_server():
    with hostile_server(era="modern") as running:
        yield running


@pytest.fixture(scope="module")
def legacy_server():
    with hostile_server(era="legacy") as running:
        yield running


async def test_a_tool_with_an_invalid_annotation_is_left_out_of_the_listing_with_why(modern_server):
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_http_client(
            modern_server.url, trust_env=False, on_log=logs.append
        ) as client:
            assert client.era == "modern"
            names = [tool.name for tool in await client.list_tools()]
            # Listed again (from the cache or not), still left out, and said once per listing.
            assert [tool.name for tool in await client.list_tools()] == names
    assert "route" in names
    assert "echo" in names
    assert "misrouted" not in names
    said = [line for line in logs if "misrouted" in line]
    assert len(said) == 2
    assert "primitive-only" in said[0]
    assert "Score" in said[0]


async def test_the_initialize_era_lists_every_tool(legacy_server):
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_http_client(
            legacy_server.url, trust_env=False, on_log=logs.append
        ) as client:
            assert client.era == "legacy"
            names = [tool.name for tool in await client.list_tools()]
    assert "misrouted" in names
    assert not [line for line in logs if "x-mcp-header" in line]

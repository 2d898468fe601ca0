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


def connect(server, **options):
    """A client of the server, with ``ClientOptions`` given by keyword."""
    target = trio_mcp.HTTPTarget(server.url, trust_env=False)
    return trio_mcp.open_client(target, options=trio_mcp.ClientOptions(**options))


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
        async with trio_mcp.open_client(
            trio_mcp.HTTPTarget(modern_server.url, trust_env=False),
            options=trio_mcp.ClientOptions(on_log=logs.append),
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
        async with trio_mcp.open_client(
            trio_mcp.HTTPTarget(legacy_server.url, trust_env=False),
            options=trio_mcp.ClientOptions(on_log=logs.append),
        ) as client:
            assert client.era == "legacy"
            names = [tool.name for tool in await client.list_tools()]
    assert "misrouted" in names
    assert not [line for line in logs if "x-mcp-header" in line]


async def test_designated_arguments_go_in_mcp_param_headers(modern_server):
    with trio.fail_after(LIMIT):
        async with connect(modern_server) as client:
            await client.list_tools()
            # The server checks each header against its argument (400 -32020 otherwise) and
            # answers the headers it got, as they were sent.
            result = await client.call_tool(
                "route", {"region": "Zürich 1", "priority": 42, "verbose": False, "note": "not a header"}
            )
            assert result.structured_content == {
                "mcp-param-region": "=?base64?WsO8cmljaCAx?=",
                "mcp-param-priority": "42",
                "mcp-param-verbose": "false",
            }
            # Null and absent arguments send none.
            result = await client.call_tool("route", {"region": "eu-west1", "verbose": None})
            assert result.structured_content == {"mcp-param-region": "eu-west1"}
            # Through the multi round-trip path too (a callback makes the call take it).
            notes = []
            result = await client.call_tool("route", {"priority": -7}, on_notification=notes.append)
            assert result.structured_content == {"mcp-param-priority": "-7"}


async def test_a_tool_never_listed_is_listed_once_on_the_servers_header_mismatch(modern_server):
    with trio.fail_after(LIMIT):
        async with connect(modern_server) as client:
            # The server wants the headers: without a listing the client cannot know them,
            # so the first call is refused with -32020; the client lists the tools and
            # sends it once more, with the headers.
            result = await client.call_tool("route", {"region": "eu-west1"})
            assert result.structured_content == {"mcp-param-region": "eu-west1"}
            assert client._header_mismatch_retries == 1
            # Listed now: the next call carries its headers at once.
            result = await client.call_tool("route", {"region": "us-east1"})
            assert result.structured_content == {"mcp-param-region": "us-east1"}
            assert client._header_mismatch_retries == 1


async def test_an_argument_no_header_can_carry_is_the_callers_error(modern_server):
    with trio.fail_after(LIMIT):
        async with connect(modern_server) as client:
            await client.list_tools()
            with pytest.raises(ValueError, match="Mcp-Param-Priority"):
                await client.call_tool("route", {"priority": 2**60})
            # Nothing was sent, and the connection goes on.
            assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"

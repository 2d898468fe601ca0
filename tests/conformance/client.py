"""The conformance client: trio_mcp under the official MCP conformance harness.

The harness (``@modelcontextprotocol/conformance``) starts a mock server for
each scenario and runs this program as ``python client.py <url>``, with the
scenario's name in ``MCP_CONFORMANCE_SCENARIO`` and, for some scenarios, a
JSON context in ``MCP_CONFORMANCE_CONTEXT`` (the tool calls to make, or
credentials). The mock records what the client sends and judges it; this
program only does what a user of the library would do for each scenario,
through the public API, and exits 0 when every step it took succeeded.

A scenario this program does not know fails (exit 2), so that a scenario
added to the harness is never passed by doing nothing.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trio_mcp
import trio_mcp.types

#: Every scenario is bounded (the harness kills a client after its own timeout,
#: 120 s in run.py): a hang must show up as this client's failure instead.
STEP_TIMEOUT = 60.0

#: How long the server/discover probe may take before the server is taken for
#: one of the initialize era (the library's default is 10 s). The harness runs
#: every scenario's mock server in one Node process, all at once: on a loaded
#: machine its event loop stalls for seconds, and a 2026-07-28 mock would be
#: taken for an old server. A user whose server is that slow sets it too.
PROBE_TIMEOUT = 30.0

Scenario = Callable[[str, dict[str, Any]], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    """Register a scenario function under the harness's names for it."""

    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


def options(**hooks: Any) -> trio_mcp.ClientOptions:
    """The options of every scenario: the hooks it needs, and a patient probe."""
    return trio_mcp.ClientOptions(probe_timeout=PROBE_TIMEOUT, **hooks)


def accept_with_defaults(params: trio_mcp.types.ElicitRequestParams) -> trio_mcp.types.ElicitResult:
    """Answer a form with every default its schema gives (SEP-1034)."""
    if not isinstance(params, trio_mcp.types.ElicitFormParams):
        return trio_mcp.types.ElicitResult(action="decline")
    properties = params.requested_schema.get("properties", {})
    content = {name: schema["default"] for name, schema in properties.items() if "default" in schema}
    return trio_mcp.types.ElicitResult(action="accept", content=content)


def accept_confirm(params: trio_mcp.types.ElicitRequestParams) -> trio_mcp.types.ElicitResult:
    """Answer a yes/no form with yes (the multi round-trip scenarios)."""
    return trio_mcp.types.ElicitResult(action="accept", content={"confirmed": True})


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


@scenario("initialize")
async def initialize(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        await client.list_tools()


@scenario("tools_call")
async def tools_call(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        await client.list_tools()
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
        expect("8" in result.text, f"add_numbers(5, 3) answered {result.text!r}")


@scenario("sse-retry")
async def sse_retry(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        await client.list_tools()
        result = await client.call_tool("test_reconnection", {})
        expect(not result.is_error, f"test_reconnection failed: {result.text!r}")


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options(on_elicitation=accept_with_defaults)) as client:
        await client.list_tools()
        result = await client.call_tool("test_client_elicitation_defaults", {})
        expect(not result.is_error, f"test_client_elicitation_defaults failed: {result.text!r}")


def decline(params: trio_mcp.types.ElicitRequestParams) -> trio_mcp.types.ElicitResult:
    return trio_mcp.types.ElicitResult(action="decline")


def no_model(params: trio_mcp.types.CreateMessageParams) -> trio_mcp.types.CreateMessageResult:
    raise trio_mcp.RpcError(-32603, "no model here")


def no_roots() -> list[trio_mcp.types.Root]:
    return []


@scenario("request-metadata")
async def request_metadata(url: str, context: dict[str, Any]) -> None:
    # Every hook, so that every capability the scenario checks is declared.
    async with trio_mcp.open_http_client(
        url, options=options(on_elicitation=decline, on_sampling=no_model, on_roots=no_roots)
    ) as client:
        await client.list_tools()
        # A tool call declares the client's capabilities (a listing asks for no input).
        await client.call_tool("any_tool", {})


@scenario("sep-2322-client-request-state")
async def request_state(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options(on_elicitation=accept_confirm)) as client:
        await client.list_tools()
        for tool in (
            "test_mrtr_echo_state",
            "test_mrtr_no_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_result_type",
        ):
            result = await client.call_tool(tool, {})
            expect(not result.is_error, f"{tool} failed: {result.text!r}")


@scenario("http-standard-headers")
async def standard_headers(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool.name, {})
        for resource in await client.list_resources():
            await client.read_resource(resource.uri)
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt.name)


@scenario("http-custom-headers")
async def custom_headers(url: str, context: dict[str, Any]) -> None:
    calls = context.get("toolCalls", [])
    expect(bool(calls), "the harness named no tool calls")
    async with trio_mcp.open_http_client(url, options=options()) as client:
        await client.list_tools()
        for call in calls:
            await client.call_tool(call["name"], call.get("arguments", {}))


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(url: str, context: dict[str, Any]) -> None:
    # Call every tool listed: the invalid ones must never be listed.
    async with trio_mcp.open_http_client(url, options=options()) as client:
        tools = await client.list_tools()
        expect(any(tool.name == "valid_tool" for tool in tools), "valid_tool was not listed")
        for tool in tools:
            await client.call_tool(tool.name, {"region": "us-west1"})


@scenario("json-schema-ref-no-deref")
async def ref_no_deref(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        tools = await client.list_tools()
        expect(any(tool.name == "lookup_user" for tool in tools), "lookup_user was not listed")


@scenario("json-schema-2020-12-preservation")
async def schema_preservation(url: str, context: dict[str, Any]) -> None:
    async with trio_mcp.open_http_client(url, options=options()) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        focal = tools["json_schema_2020_12_tool"]
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


async def main(url: str, name: str, context: dict[str, Any]) -> None:
    with trio.fail_after(STEP_TIMEOUT):
        await SCENARIOS[name](url, context)


if __name__ == "__main__":
    logging.basicConfig(
        level=logging.DEBUG, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if name.startswith("auth/"):
        # The authorization flows (trio_mcp.auth, the auth extra), beside this file.
        from auth_scenarios import SCENARIOS as AUTH_SCENARIOS

        SCENARIOS.update(AUTH_SCENARIOS)
    if name not in SCENARIOS:
        print(f"unknown scenario {name!r}", file=sys.stderr)
        sys.exit(2)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    trio.run(main, sys.argv[-1], name, context)

"""A task server on the official Python SDK v1 (its experimental 2025-11-25 tasks), for the interop tests.

Run it with the Python of the peers' SDK v1 virtualenv (``peers.json`` names it)::

    .peers/venv-sdk1/bin/python tests/interop/servers/sdk_v1_tasks_server.py

The low-level ``Server`` with ``experimental.enable_tasks()`` (in-memory
store, one process). What it offers, each tool ``taskSupport: optional``:

* ``work {seconds}``: sleeps (0.2 s unless said), then says it is done;
* ``explode {seconds}``: sleeps, then raises, which the SDK reports as a
  ``failed`` task with the exception in ``statusMessage`` and a
  ``tasks/result`` that carries neither an error nor ``isError``.
"""

import warnings

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

warnings.simplefilter("ignore")
server = Server("sdk-v1-tasks")
server.experimental.enable_tasks()


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    return [
        types.Tool(name="work", inputSchema=schema, execution=types.ToolExecution(taskSupport="optional")),
        types.Tool(name="explode", inputSchema=schema, execution=types.ToolExecution(taskSupport="optional")),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    seconds = float(arguments.get("seconds", 0.2))

    async def work(task: object) -> types.CallToolResult:
        await anyio.sleep(seconds)
        if name == "explode":
            raise ValueError("the work raised")
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{name} done")])

    if ctx.experimental.is_task:
        return await ctx.experimental.run_task(work)
    return await work(None)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)

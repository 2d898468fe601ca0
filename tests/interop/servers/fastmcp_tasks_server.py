"""A task server on fastmcp-tasks (the ``io.modelcontextprotocol/tasks`` extension), for the interop tests.

Run it with the Python of the peers' tasks virtualenv (``peers.json`` names it)::

    .peers/venv-tasks/bin/python tests/interop/servers/fastmcp_tasks_server.py

fastmcp-tasks serves tasks in the 2026-07-28 era only, with its in-memory
backend (one process). What it offers:

* ``crunch {seconds}`` (``task=True``): sleeps, then says how long; run as a
  task for a client that declares the extension, at once otherwise;
* ``fail_job`` (``task=True``): raises, which fastmcp reports as a tool
  error (``isError``), so the task ends ``completed``;
* ``echo {text}``: an ordinary tool, never a task.
"""

import asyncio

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension

mcp = FastMCP("fastmcp-tasks-peer")
mcp.add_extension(TasksExtension())


@mcp.tool(task=True)
async def crunch(seconds: float = 1.0) -> str:
    """Work for a while, as a task."""
    await asyncio.sleep(seconds)
    return f"crunched for {seconds} s"


@mcp.tool(task=True)
async def fail_job() -> str:
    """Fail, as a task."""
    await asyncio.sleep(0.1)
    raise ValueError("the job broke")


@mcp.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


if __name__ == "__main__":
    mcp.run("stdio", show_banner=False)

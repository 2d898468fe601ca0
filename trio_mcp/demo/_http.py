"""The demo server over Streamable HTTP: ``python -m trio_mcp.demo --http [HOST:]PORT``.

Each MCP connection behind the front (the 2026-07-28 era's one, and one per
``initialize``) is a demo server of its own, as each process is on stdio.
This module imports h11 (the ``http`` extra); the stdio path never imports
it.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import trio

from .._serving.http import HTTPFront
from .._serving.http_socket import serve_front
from ._server import serve_connection

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["serve_http"]


async def serve_http(
    host: str,
    port: int,
    *,
    log: Callable[[str], object] | None = None,
    wrong_output: bool = False,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the demo over Streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled.

    Reports the listeners once it accepts connections (``port`` 0: a free
    port, read from the listener's socket).

    Raises:
        OSError: The address cannot be listened on.
    """
    front = HTTPFront(partial(serve_connection, log=log, wrong_output=wrong_output), log=log)
    await serve_front(front, host, port, task_status=task_status)

"""What the task tests share: how to start the demo server over HTTP, and read its URL.

The demo server is reached over HTTP through ``tests/servers/http_front.py``
(one demo process behind a small front) or, where the demo serves HTTP
itself, ``python -m trio_mcp.demo --http 0``. Either prints a first line
that gives the address: ``LISTENING PORT``, or the URL.
"""

from __future__ import annotations

import sys
from pathlib import Path

HTTP_FRONT = Path(__file__).resolve().parent / "servers" / "http_front.py"


def http_demo_command() -> list[str]:
    """The command that serves the demo over HTTP on a free port of 127.0.0.1."""
    if HTTP_FRONT.exists():
        return [sys.executable, str(HTTP_FRONT)]
    return [sys.executable, "-m", "trio_mcp.demo", "--http", "0"]


def http_demo_url(first_line: str) -> str:
    """The MCP endpoint, from the first line the command printed."""
    line = first_line.strip()
    if line.startswith("LISTENING "):
        return f"http://127.0.0.1:{line.split()[1]}/mcp"
    assert line.startswith("http://"), f"the HTTP demo did not start: {first_line!r}"
    return line

"""A small initialize-era MCP server for the server group tests, scripted by its flags.

It speaks enough of revision 2025-11-25 for a client pinned to it:
``initialize``, ``ping``, ``tools/list``, ``tools/call``, ``prompts/list``.
A client in ``protocol="auto"`` mode gets an error for its
``server/discover`` probe, which means the initialize era.

Flags:

* ``--tag TEXT``: how its ``whoami`` tool and its stderr name it.
* ``--tools A,B``: the names of extra tools (each answers like ``whoami``).
* ``--exit-at-once CODE``: write a line to stderr and exit with CODE before
  reading anything (a server that crashes at start).
* ``--hang``: never read or answer anything (a server that hangs at start).
* ``--starts PATH``: append one line (the pid and a monotonic time) to
  PATH as it starts, so that a test can count and time the starts.

Tools: ``whoami`` (answers the tag and the pid), ``die {code}`` (exits
with ``code`` without answering), ``add_tool {name}`` (adds a tool, then
sends ``notifications/tools/list_changed`` before answering), and
``sleep {seconds}``.

Nothing it does outlives the test run by much: a hanging server exits by
itself after ``LIFETIME`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

LIFETIME = 120.0


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tag", default="server")
    parser.add_argument("--tools", default="")
    parser.add_argument("--exit-at-once", type=int, default=None)
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--starts", default=None)
    parser.add_argument("--linger", default=None, help="after stdin ends, wait 0.5 s, then write this file")
    options = parser.parse_args()
    if options.starts:
        with open(options.starts, "a", encoding="utf-8") as record:
            record.write(f"{os.getpid()} {time.monotonic()}\n")
    if options.exit_at_once is not None:
        sys.stderr.write(f"{options.tag}: giving up at once\n")
        sys.stderr.flush()
        sys.exit(options.exit_at_once)
    if options.hang:
        time.sleep(LIFETIME)
        return
    tools = ["whoami", "die", "add_tool", "sleep", *filter(None, options.tools.split(","))]
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if request_id is None:
            continue
        result: dict | None = None
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}, "prompts": {}},
                "serverInfo": {"name": "group-test-server", "version": "1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {
                "tools": [{"name": name, "inputSchema": {"type": "object"}} for name in tools],
            }
        elif method == "prompts/list":
            result = {"prompts": [{"name": "hello", "description": f"from {options.tag}"}]}
        elif method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments") or {}
            if name == "die":
                sys.stderr.write(f"{options.tag}: dying as asked\n")
                sys.stderr.flush()
                os._exit(int(arguments.get("code", 1)))
            elif name == "add_tool":
                tools.append(str(arguments["name"]))
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                result = text("added")
            elif name == "sleep":
                time.sleep(float(arguments.get("seconds", 1)))
                result = text("slept")
            elif name in tools:
                result = text(f"{options.tag} {os.getpid()}")
        if result is None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
    if options.linger:
        # A server slow to leave: it exits by itself only if given the time.
        time.sleep(0.5)
        with open(options.linger, "w", encoding="utf-8") as record:
            record.write("left by itself\n")


if __name__ == "__main__":
    main()

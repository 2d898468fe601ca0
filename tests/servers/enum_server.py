"""A stdio MCP server (initialize era) with one tool whose argument is an enum of values with spaces.

``weather location=...`` answers ``weather in LOCATION``; the enum is
``Los Angeles``, ``New York``, ``Paris`` and ``O'Hare``: what Tab completion
must quote to keep the command line whole.
"""

from __future__ import annotations

import json
import sys

TOOL = {
    "name": "weather",
    "inputSchema": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "enum": ["Los Angeles", "New York", "Paris", "O'Hare"]}
        },
        "required": ["location"],
    },
}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        request_id = message.get("id")
        if request_id is None:
            continue
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "enum-server", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            location = message["params"]["arguments"]["location"]
            result = {"content": [{"type": "text", "text": f"weather in {location}"}]}
        else:
            error = {"code": -32601, "message": f"no {method}"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

"""A small initialize-era MCP stdio server that talks on stderr (standard library only).

Usage: ``python stderr_server.py``

It writes ``starting up`` to stderr, then serves ``initialize``,
``tools/list`` and ``tools/call``, whose tools are:

* ``ok``: answers ``fine``, writing nothing to stderr.
* ``broken``: writes a traceback to stderr, then answers ``isError`` with
  only ``Error executing tool`` (as servers built on some SDKs do).
* ``refuse``: writes ``refusing: no licence`` to stderr, then answers with a
  JSON-RPC error ``-32603``.
* ``crash``: writes a traceback to stderr and exits with status 1, never
  answering.

Every stderr line is flushed before the answer is written.
"""

import json
import sys

TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    for name in ("ok", "broken", "refuse", "crash")
]
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "server.py", line 12, in handle',
    "ValueError: the database is locked",
]


def say(*lines):
    for line in lines:
        print(line, file=sys.stderr)
    sys.stderr.flush()


def answer(message, result=None, error=None):
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if error is not None:
        reply["error"] = error
    else:
        reply["result"] = result
    print(json.dumps(reply), flush=True)


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def main():
    say("starting up")
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message:
            continue
        if method == "initialize":
            answer(
                message,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stderr-server", "version": "1"},
                },
            )
        elif method == "tools/list":
            answer(message, {"tools": TOOLS})
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "ok":
                answer(message, text("fine"))
            elif name == "broken":
                say(*TRACEBACK)
                answer(message, text("Error executing tool", is_error=True))
            elif name == "refuse":
                say("refusing: no licence")
                answer(message, error={"code": -32603, "message": "Internal error"})
            elif name == "crash":
                say(*TRACEBACK)
                sys.exit(1)
        else:
            answer(message, error={"code": -32601, "message": f"no method {method}"})


if __name__ == "__main__":
    main()

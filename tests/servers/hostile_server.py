"""A small initialize-era MCP server that misbehaves on purpose (standard library only).

Usage: ``python hostile_server.py MODE``. Each mode is one misbehaviour the
client must survive; otherwise the server answers ``initialize`` (at the
offered version), ``tools/list`` (one tool, ``echo``), ``tools/call`` of
``echo`` and ``ask``, ``ping``, and ``server/discover`` with ``-32601``.

Modes:

``polite``
    No misbehaviour (a baseline).
``string-error`` / ``string-code`` / ``no-message`` / ``null-error``
    Answer ``server/discover`` with a malformed error: ``"error": "Method
    not found"``, a code that is a string, an error without a message, or
    ``"error": null``.
``request-on-eof``
    When stdin ends (the client is closing), send the client an
    ``elicitation/create`` request, then keep running for a minute.
``duplicate-ids``
    ``ask`` sends two ``elicitation/create`` requests with the same id, then
    waits for answers forever.
``ask``
    ``ask`` sends one ``elicitation/create`` request and answers with what
    the client said.
``flood``
    After ``initialize``, write ``y`` lines to stdout as fast as it can,
    forever (the client must read on, and say so, but not once per line).
``die-on-first-line``
    Read one line, write ``dying <pid>`` to stderr, exit with status 3.
"""

import json
import os
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "polite"
OUT = sys.stdout
LOCK = threading.Lock()


def send(message):
    with LOCK:
        OUT.write(json.dumps(message) + "\n")
        OUT.flush()


def answer(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def error(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def elicit(request_id):
    send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    )


def flood():
    line = b"y\n" * 4096
    out = OUT.buffer
    try:
        while True:
            out.write(line)
            out.flush()
    except (BrokenPipeError, OSError):
        os._exit(0)


def malformed_discover(request_id):
    errors = {
        "string-error": "Method not found",
        "string-code": {"code": "-32601", "message": "Method not found"},
        "no-message": {"code": -32601},
        "null-error": None,
    }
    send({"jsonrpc": "2.0", "id": request_id, "error": errors[MODE]})


def main():
    if MODE == "die-on-first-line":
        sys.stdin.readline()
        sys.stderr.write(f"dying {os.getpid()}\n")
        sys.stderr.flush()
        sys.exit(3)
    waiting = {}
    for raw in sys.stdin:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        method = message.get("method")
        request_id = message.get("id")
        if method is None:
            # An answer to one of our requests.
            pending = waiting.pop(request_id, None)
            if pending is not None:
                result = message.get("result") or {}
                text = f"answer: {result.get('action')} {json.dumps(result.get('content'))}"
                answer(pending, {"content": [{"type": "text", "text": text}], "isError": False})
            continue
        if request_id is None:
            continue
        if method == "server/discover":
            if MODE in ("string-error", "string-code", "no-message", "null-error"):
                malformed_discover(request_id)
            else:
                error(request_id, -32601, "Method not found")
        elif method == "initialize":
            offered = message.get("params", {}).get("protocolVersion", "2025-11-25")
            answer(
                request_id,
                {
                    "protocolVersion": offered,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            )
            if MODE == "flood":
                threading.Thread(target=flood, daemon=True).start()
        elif method == "tools/list":
            answer(request_id, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
        elif method == "tools/call":
            name = message.get("params", {}).get("name")
            if name == "ask" and MODE == "duplicate-ids":
                elicit(7)
                elicit(7)
            elif name == "ask":
                waiting[1000 + len(waiting)] = request_id
                elicit(1000 + len(waiting) - 1)
            else:
                text = json.dumps(message.get("params", {}).get("arguments", {}))
                answer(request_id, {"content": [{"type": "text", "text": text}], "isError": False})
        elif method == "ping":
            answer(request_id, {})
        else:
            error(request_id, -32601, f"Method not found: {method}")
    if MODE == "request-on-eof":
        elicit(99)
        time.sleep(60)


if __name__ == "__main__":
    main()

"""A stdio server that records, byte for byte, every line the client writes.

At start it sends the client two requests of its own, ``ping`` (id ``"s1"``)
and ``sampling/createMessage`` (id ``"s2"``), so that the client's answers to
server requests are on record too. Requests it gets:

* ``dump``: answers ``{"lines": [...]}``, every line read so far as text.
* ``hang``: never answers (so that the client abandons it).
* anything else: answers ``{}``.
"""

from __future__ import annotations

import json
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
    send({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {"messages": []}})
    lines: list[str] = []
    for raw in sys.stdin.buffer:
        line = raw.decode()
        lines.append(line)
        message = json.loads(line)
        if "method" not in message or "id" not in message:
            continue
        if message["method"] == "dump":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"lines": lines}})
        elif message["method"] != "hang":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})


if __name__ == "__main__":
    main()

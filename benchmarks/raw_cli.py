"""The least code that does the work of ``trio-mcp call echo text=hi``, as a whole process.

It starts the bundled demo server, asks ``server/discover``, lists the tools
(``tools/list``, as the command does to read the arguments by the tool's
input schema) and calls the ``echo`` tool with the 2026-07-28 envelope,
prints the text, closes the server's stdin and waits for it to exit: the
exchange the CLI has, without argument parsing, negotiation rules, typed
results, timeouts or error handling.

``--stdlib`` does the same with blocking pipes and no Trio, for reference.
The start-up benchmark in ``bench.py`` runs this against the real command.
"""

from __future__ import annotations

import json
import subprocess
import sys

SERVER = [sys.executable, "-m", "trio_mcp.demo"]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}
LINES = (
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}) + "\n",
    json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}) + "\n",
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
        }
    )
    + "\n",
)


def text_of(line: bytes) -> str:
    return str(json.loads(line)["result"]["content"][0]["text"])


def stdlib() -> None:
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    for line in LINES:
        proc.stdin.write(line.encode())
        proc.stdin.flush()
        answer = proc.stdout.readline()
    print(text_of(answer))
    proc.stdin.close()
    proc.wait()


async def with_trio() -> None:
    import trio

    proc = await trio.lowlevel.open_process(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    buffer = b""
    for line in LINES:
        await proc.stdin.send_all(line.encode())
        while b"\n" not in buffer:
            buffer += await proc.stdout.receive_some()
        answer, _, buffer = buffer.partition(b"\n")
    print(text_of(answer))
    await proc.stdin.aclose()
    await proc.wait()


if __name__ == "__main__":
    if "--stdlib" in sys.argv:
        stdlib()
    else:
        import trio

        trio.run(with_trio)

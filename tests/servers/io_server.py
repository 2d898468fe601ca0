"""A scriptable stdio server for the transport's I/O tests (standard library only).

Usage: ``python io_server.py MODE [ARG...]``

Modes:

``script``
    Requests are handled one at a time, in the order they are read. A request
    whose method is ``whoami`` is answered with the process's ``argv`` (after
    the mode), environment and working directory. Any other request runs the
    ops in its ``params.ops`` (see below) and then gets the default answer,
    unless an op already answered it::

        {
            "jsonrpc": "2.0",
            "id": ID,
            "result": {"method": ..., "params": ..., "notes": [...], "replies": [...]},
        }

    ``params`` is echoed without its ``ops``; ``notes`` lists every
    notification the client sent so far, ``replies`` every answer the client
    gave to requests of ours (see the ``ask`` op).

``gather N [separate]``
    Read N requests, then answer them in reverse order, all in one write (one
    write each with ``separate``). Each result is ``{"params": params}``.

Ops are JSON arrays whose first item names the op. Text is latin-1, one
character per byte, so a test can write any bytes. In text, ``@ID@`` becomes
the JSON id of the request being handled and ``@HELD0@``, ``@HELD1@``, ...
the ids of held requests.

* ``["out", text]``: write text to stdout and flush. Text naming ``@ID@`` counts
  as the answer (no default answer follows).
* ``["out_bytes", text]``: the same, one byte per write, flushing each.
* ``["err", text, count]``: write text ``count`` times to stderr and flush.
* ``["ask", text]``: write text (a request of the server's) to stdout, then read
  stdin until the client's reply comes, and record it in ``replies``.
* ``["hold"]``: do not answer this request now; its id is held.
* ``["answer_held"]``: give every held request its default answer, oldest first.
* ``["respond"]``: give the default answer now.
* ``["close_stdout"]``: close stdout (answer first); keep reading stdin until EOF.
* ``["exit", code]``: exit at once with ``code``.

The server exits with status 0 when its stdin ends.
"""

import json
import os
import sys
from collections import deque

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
stderr = sys.stderr.buffer

notes = []
replies = []
held = []
backlog = deque()
state = {"stdout_closed": False}


def dumps(message):
    return json.dumps(message, separators=(",", ":")).encode()


def write(data):
    stdout.write(data)
    stdout.flush()


def read_message():
    """The next message from the client, or None at EOF; skips lines that are not JSON."""
    while True:
        line = stdin.readline()
        if not line:
            return None
        try:
            return json.loads(line)
        except ValueError:
            sys.stderr.write(f"io_server: not JSON: {line!r}\n")


def next_request():
    """The next request, recording notifications on the way; None at EOF."""
    while True:
        message = backlog.popleft() if backlog else read_message()
        if message is None:
            return None
        if "method" in message and "id" in message:
            return message
        if "method" in message:
            notes.append(message)
        else:
            replies.append(message)


def default_answer(request):
    params = {k: v for k, v in (request.get("params") or {}).items() if k != "ops"}
    result = {"method": request["method"], "params": params, "notes": notes, "replies": replies}
    return dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n"


def expand(text, request):
    data = text.encode("latin-1").replace(b"@ID@", dumps(request["id"]))
    for index, held_request in enumerate(held):
        data = data.replace(b"@HELD%d@" % index, dumps(held_request["id"]))
    return data


def ask(data):
    write(data)
    while True:
        message = read_message()
        if message is None:
            return
        if "method" in message:
            backlog.append(message)
        else:
            replies.append(message)
            return


def run_ops(request):
    answered = False
    for op in (request.get("params") or {}).get("ops", []):
        name = op[0]
        if name == "out":
            answered = answered or "@ID@" in op[1]
            write(expand(op[1], request))
        elif name == "out_bytes":
            answered = answered or "@ID@" in op[1]
            for byte in expand(op[1], request):
                write(bytes([byte]))
        elif name == "err":
            count = op[2] if len(op) > 2 else 1
            for _ in range(count):
                stderr.write(op[1].encode("latin-1"))
            stderr.flush()
        elif name == "ask":
            ask(expand(op[1], request))
        elif name == "hold":
            held.append(request)
            answered = True
        elif name == "answer_held":
            while held:
                write(default_answer(held.pop(0)))
        elif name == "respond":
            write(default_answer(request))
            answered = True
        elif name == "close_stdout":
            # Point fd 1 at /dev/null: the pipe's write end is closed, and
            # Python's own flush at exit still has somewhere to go.
            stdout.flush()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            state["stdout_closed"] = True
            return
        elif name == "exit":
            stdout.flush()
            stderr.flush()
            os._exit(op[1])
        else:
            raise SystemExit(f"io_server: unknown op {name!r}")
    if not answered:
        write(default_answer(request))


def whoami(request):
    result = {"argv": sys.argv[2:], "env": dict(os.environ), "cwd": os.getcwd()}
    write(dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + b"\n")


def script():
    while True:
        request = next_request()
        if request is None:
            return
        if state["stdout_closed"]:
            continue
        if request["method"] == "whoami":
            whoami(request)
        else:
            run_ops(request)


def gather(count, separate):
    requests = []
    while len(requests) < count:
        request = next_request()
        if request is None:
            return
        requests.append(request)
    lines = [
        dumps({"jsonrpc": "2.0", "id": r["id"], "result": {"params": r.get("params")}}) + b"\n"
        for r in reversed(requests)
    ]
    if separate:
        for line in lines:
            write(line)
    else:
        write(b"".join(lines))
    while next_request() is not None:
        pass


def main():
    mode = sys.argv[1]
    if mode == "script":
        script()
    elif mode == "gather":
        gather(int(sys.argv[2]), sys.argv[3:] == ["separate"])
    else:
        raise SystemExit(f"io_server: unknown mode {mode!r}")


if __name__ == "__main__":
    main()

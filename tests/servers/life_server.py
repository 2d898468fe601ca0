"""A scriptable stdio JSON-RPC server for the transport lifecycle tests.

It reads one JSON message per line from stdin and remembers every one. What
it does with a request depends on the request's method:

* ``echo``: answers ``{"method": ..., "params": ...}``.
* ``seen``: answers ``{"lines": [...]}``, every message read so far (this one
  included), so a test can check what reached the server.
* ``hang``: never answers.
* ``notify_then_hang``: sends one ``notifications/message`` and never answers.
* ``late``: answers after ``params["delay"]`` seconds, from a thread, while
  the server goes on reading.
* ``exit``: writes ``params["stderr_bytes"]`` bytes of numbered lines and then
  ``params["last_words"]`` to stderr, and exits with ``params["code"]``,
  without answering.
* ``kill``: kills itself with SIGKILL, without answering.
* ``close_stdout``: closes its stdout and goes on reading stdin.
* ``garbage``: writes a line that is not JSON to stdout, then answers like ``echo``.
* ``spawn``: starts a child that sleeps, in the server's own process group,
  and answers ``{"pid": ...}``. With ``params["inherit"]`` the child inherits
  the server's stdout and stderr; without, it holds none of its pipes.

Command-line flags change how the server ends:

* ``--record PATH``: append ``EOF`` to PATH when stdin ends and ``TERM``
  when SIGTERM arrives (then die of it, unless ``--ignore-term``).
* ``--ignore-eof``: keep running after stdin ends.
* ``--ignore-term``: survive SIGTERM.
* ``--no-read``: never read stdin at all.
* ``--exit-at-once CODE``: exit with CODE before reading anything.
* ``--tag TEXT``: ignored; tells servers with one command apart.

Nothing it starts outlives the test run by much: every sleep ends after
``LIFETIME`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

LIFETIME = 60.0

_out_lock = threading.Lock()
_stdout_closed = False


def send(message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    with _out_lock:
        if _stdout_closed:
            return
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except (OSError, ValueError):
            pass


def record(path: str | None, event: str) -> None:
    if path is not None:
        with open(path, "a") as file:
            file.write(event + "\n")


def linger() -> None:
    time.sleep(LIFETIME)


def die(params: dict) -> None:
    size = int(params.get("stderr_bytes", 0))
    written = 0
    number = 0
    while written < size:
        number += 1
        line = f"stderr line {number:06d} " + "x" * 80 + "\n"
        sys.stderr.write(line)
        written += len(line)
    if params.get("last_words"):
        sys.stderr.write(params["last_words"] + "\n")
    sys.stderr.flush()
    os._exit(int(params.get("code", 0)))


def spawn(params: dict) -> int:
    pipes = None if params.get("inherit") else subprocess.DEVNULL
    child = subprocess.Popen(
        [sys.executable, "-c", f"import time; time.sleep({LIFETIME})"],
        stdin=subprocess.DEVNULL,
        stdout=pipes,
        stderr=pipes,
    )
    return child.pid


def answer_later(request_id: object, delay: float) -> None:
    time.sleep(delay)
    send({"jsonrpc": "2.0", "id": request_id, "result": {"late": True}})


def close_stdout() -> None:
    global _stdout_closed
    with _out_lock:
        _stdout_closed = True
        os.close(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--no-read", action="store_true")
    parser.add_argument("--exit-at-once", type=int)
    parser.add_argument("--tag")
    options = parser.parse_args()

    if options.record is not None:

        def on_term(signum: int, frame: object) -> None:
            record(options.record, "TERM")
            if not options.ignore_term:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_term)
    elif options.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    if options.exit_at_once is not None:
        sys.exit(options.exit_at_once)
    if options.no_read:
        linger()
        return

    seen: list[object] = []
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        seen.append(message)
        if not isinstance(message, dict) or "id" not in message:
            continue
        request_id = message["id"]
        method = message.get("method")
        params = message.get("params") or {}
        if method == "echo":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"method": method, "params": params}})
        elif method == "garbage":
            with _out_lock:
                sys.stdout.buffer.write(b"this is not JSON at all\n")
                sys.stdout.buffer.flush()
            send({"jsonrpc": "2.0", "id": request_id, "result": {"method": method, "params": params}})
        elif method == "seen":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"lines": seen}})
        elif method == "late":
            threading.Thread(target=answer_later, args=(request_id, params["delay"]), daemon=True).start()
        elif method == "exit":
            die(params)
        elif method == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif method == "close_stdout":
            close_stdout()
        elif method == "notify_then_hang":
            send(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}}
            )
        elif method == "spawn":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"pid": spawn(params)}})
        # "hang", and anything else: no answer.

    record(options.record, "EOF")
    if options.ignore_eof:
        linger()


if __name__ == "__main__":
    main()

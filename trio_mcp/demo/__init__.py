"""A small MCP server to try clients against: ``python -m trio_mcp.demo``.

The demo server ships with trio-mcp so that a client can be tried on a fresh
machine with nothing else installed. It is what the ``trio-mcp`` command
talks to when no server command is given (``trio-mcp call echo text=hi``),
and what the documentation's examples run. It is a real stdio MCP server,
written with trio-mcp's own protocol core and Trio, and it speaks both
protocol eras:

* **2026-07-28**, stateless: a first request carrying the
  ``io.modelcontextprotocol/protocolVersion`` ``_meta`` envelope (the
  ``server/discover`` probe of a client in ``protocol="auto"`` mode, for
  example) puts the process in this era. Every result carries
  ``resultType`` and the server's name and version in
  ``_meta["io.modelcontextprotocol/serverInfo"]``.
* **The initialize era** (2025-11-25, 2025-06-18, 2025-03-26 and
  2024-11-05): a first ``initialize`` request puts the process in this era;
  the server answers with the version the client asked for, or 2025-11-25
  when it does not know that one.

What it offers:

========================== ==================================================
``echo {text}``            Returns ``text``.
``add {a, b}``             Returns the sum, as text and as structured content
                           ``{"sum": ...}`` (the tool has an output schema;
                           with ``--wrong-output`` the sum comes as a string,
                           which breaks it).
``slow {steps, delay}``    Takes ``steps`` steps (default 5) of ``delay``
                           seconds (default 0.2), with a progress notification
                           after each when the request asked for progress.
``ask {question}``         Asks the user for their name (elicitation) and
                           greets them: "Hello, Ada!". In the 2026-07-28 era
                           the first answer is ``input_required`` and the
                           greeting comes on the retry; in the initialize era
                           the server sends an ``elicitation/create`` request
                           to the client.
``report``                 Long work that can run as a task (``taskSupport``
                           ``optional``), with arguments ``steps``, ``delay``
                           and ``ask``: ``steps`` steps (default 3) of
                           ``delay`` seconds (default 0.5), with progress
                           after each; with ``ask``, it asks the user who the
                           report is for halfway through.
``batch``                  Long work that must run as a task (``taskSupport``
                           ``required``), with arguments ``items``,
                           ``delay`` and ``fail_at``: ``items`` items
                           (default 3) of ``delay`` seconds (default 0.2);
                           item ``fail_at`` fails, and the task with it (a
                           JSON-RPC error).
``demo://readme``          A resource: a short Markdown text about the demo.
``demo://greeting/{name}`` A resource template: "Hello, NAME!" as plain text.
``greet {name}``           A prompt asking the model to greet someone; the
                           ``name`` argument can be completed
                           (``completion/complete``).
========================== ==================================================

Tasks: in the 2025-11-25 revision the server declares the ``tasks``
capability (``tasks/get``, blocking ``tasks/result``, ``tasks/list``,
``tasks/cancel``, status notifications; the question of ``report`` is an
``elicitation/create`` request sent while a ``tasks/result`` is open). In
the 2026-07-28 era it serves the ``io.modelcontextprotocol/tasks``
extension, to requests that declare it: ``report`` and ``batch`` answer
with a task, polled with ``tasks/get`` (which carries the result, the error,
or the question), answered with ``tasks/update`` and stopped with
``tasks/cancel``. Tasks live as long as the process, five minutes at most
unless a 2025-11-25 client asks for another time to live (from one second to an hour).

``slow`` and ``ask`` send log messages at ``info`` level: in the 2026-07-28
era to requests that set ``_meta["io.modelcontextprotocol/logLevel"]``, in the
initialize era once the client sent ``logging/setLevel``.

Connect to it from Python like to any other server:

.. code-block:: python

    import sys

    import trio
    import trio_mcp


    async def main():
        command = [sys.executable, "-m", "trio_mcp.demo"]
        async with trio_mcp.open_stdio_client(command[0], command[1:]) as client:
            print(client.protocol_version)  # 2026-07-28
            result = await client.call_tool("add", {"a": 2, "b": 3})
            print(result.structured_content)  # {'sum': 5}


    trio.run(main)

Or talk to it by hand, one JSON-RPC message per line (here in the
initialize era):

.. example: typed-input

.. code-block:: console

    $ python -m trio_mcp.demo
    {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}
    {"jsonrpc":"2.0","method":"notifications/initialized"}
    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}

Requests are served concurrently, so answers may come out of order; a
``notifications/cancelled`` from the client stops the request it names, which
then answers nothing. Unknown methods get ``-32601``, unknown tools and
prompts ``-32602``; bad argument values give a tool result with ``isError``
set, saying what is wrong.

Over Streamable HTTP
--------------------

``python -m trio_mcp.demo --http [HOST:]PORT`` serves the same demo over
Streamable HTTP (it needs the ``http`` extra), on 127.0.0.1 unless a host
is given, and prints the URL of its endpoint once it listens: ``python -m
trio_mcp.demo --http 8000`` prints ``http://127.0.0.1:8000/mcp`` (port 0
picks a free port). Both eras are served: 2026-07-28 requests without a session, and the
initialize era with a session per ``initialize`` (``Mcp-Session-Id``), its
GET stream and DELETE. Each session is a demo server of its own, as each
process is on stdio. It serves until ``SIGTERM`` or Ctrl-C.

On stdio, the server writes nothing but JSON-RPC messages to stdout. It exits when its
stdin ends (requests still in flight get two seconds to finish), on
``SIGTERM``, and on Ctrl-C. Lines that are not JSON-RPC are dropped; give
``--verbose`` (``-v``) to see why on stderr, along with the era chosen and
every refused request.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._version import __version__
from ._server import serve

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main", "serve"]

USAGE = """\
usage: python -m trio_mcp.demo [--verbose] [--wrong-output] [--http [HOST:]PORT]

The trio-mcp demo server: an MCP server speaking JSON-RPC over stdin and
stdout, one message per line, in the 2026-07-28 era or the initialize era
(chosen by the first request).

options:
  -v, --verbose   write diagnostics (the era chosen, refused requests,
                  dropped lines) to stderr
  --http [HOST:]PORT
                  serve over Streamable HTTP instead, at
                  http://HOST:PORT/mcp (HOST 127.0.0.1 by default, PORT 0
                  for a free port); the URL is printed once it listens
                  (needs the http extra)
  --wrong-output  make add's structured output break its outputSchema (the
                  sum as a string), to see what a client does about it
  -h, --help      show this help and exit
  --version       show the version and exit
"""


def _stderr(text: str) -> None:
    # stderr may be closed, full, or a terminal made non-blocking: then the line is dropped.
    with contextlib.suppress(OSError):
        os.write(2, f"trio-mcp-demo: {text}\n".encode(errors="replace"))


async def _run(verbose: bool, wrong_output: bool = False) -> int:
    log = _stderr if verbose else None
    try:
        stdin = trio.lowlevel.FdStream(os.dup(0))
    except OSError as exc:
        _stderr(f"cannot read stdin: {exc}")
        return 2
    try:
        stdout = trio.lowlevel.FdStream(os.dup(1))
    except OSError as exc:
        await stdin.aclose()
        _stderr(f"cannot write stdout: {exc}")
        return 2
    # Only the stream above writes to the real stdout: anything else
    # printing to file descriptor 1 lands on stderr instead.
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    status = 0
    # Closed in reverse order, which restores each file's blocking mode.
    async with stdin, stdout:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    nonlocal status
                    async for signum in signals:
                        if log is not None:
                            log(f"got {signal.Signals(signum).name}; exiting")
                        status = 130 if signum == signal.SIGINT else 0
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(stop_on_signal)
                await serve(stdin, stdout, log=log, wrong_output=wrong_output)
                nursery.cancel_scope.cancel()
    return status


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as a host (127.0.0.1 when not given) and a port.

    An IPv6 host is written in brackets: ``[::1]:8000``.

    Raises:
        ValueError: Not such an address.
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "127.0.0.1"
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"not [HOST:]PORT: {text!r}")
    return host, int(port)


def url_of(host: str, port: int) -> str:
    """The URL of the demo's MCP endpoint at ``host``:``port``."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


async def _run_http(verbose: bool, wrong_output: bool, host: str, port: int) -> int:
    log = _stderr if verbose else None
    try:
        from ._http import serve_http
    except ImportError as exc:
        _stderr(f"--http needs the http extra (pip install 'trio-mcp[http]'): {exc}")
        return 2
    status = 0
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:
            try:
                listeners = await nursery.start(
                    partial(serve_http, host, port, log=log, wrong_output=wrong_output)
                )
            except OSError as exc:
                _stderr(f"cannot listen on {url_of(host, port)}: {exc}")
                return 2
            sys.stdout.write(url_of(host, listeners[0].socket.getsockname()[1]) + "\n")
            sys.stdout.flush()
            async for signum in signals:
                if log is not None:
                    log(f"got {signal.Signals(signum).name}; exiting")
                status = 130 if signum == signal.SIGINT else 0
                nursery.cancel_scope.cancel()
                break
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo server on this process's stdin and stdout; return the exit status.

    This is ``python -m trio_mcp.demo``. It returns 0 when stdin ends or
    ``SIGTERM`` arrives, 130 on Ctrl-C (``SIGINT``), and 2 on a bad option
    (or an address it cannot listen on). With ``--http`` it serves over
    Streamable HTTP until ``SIGTERM`` or Ctrl-C instead, having printed its
    URL.

    Args:
        argv: The command-line options (default: ``sys.argv[1:]``):
            ``--verbose``/``-v``, ``--wrong-output``, ``--http
            [HOST:]PORT``, ``--help``/``-h``, ``--version``.
    """
    verbose = False
    wrong_output = False
    address: tuple[str, int] | None = None
    args = iter(sys.argv[1:] if argv is None else argv)
    for arg in args:
        if arg == "--http" or arg.startswith("--http="):
            value = arg.partition("=")[2] if "=" in arg else next(args, "")
            try:
                address = parse_address(value)
            except ValueError as exc:
                sys.stderr.write(f"trio-mcp-demo: --http: {exc}\n{USAGE}")
                return 2
        elif arg in ("-v", "--verbose"):
            verbose = True
        elif arg == "--wrong-output":
            wrong_output = True
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        elif arg == "--version":
            sys.stdout.write(f"trio-mcp-demo {__version__}\n")
            return 0
        else:
            sys.stderr.write(f"trio-mcp-demo: unknown option {arg!r}\n{USAGE}")
            return 2
    if address is not None:
        return trio.run(_run_http, verbose, wrong_output, *address)
    return trio.run(_run, verbose, wrong_output)

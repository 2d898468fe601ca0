"""Serve ``sdk_server.py`` over Streamable HTTP on a free loopback port, for the interop tests.

Run it with the Python of the peers' virtualenv::

    .peers/venv/bin/python tests/interop/servers/sdk_http.py [--json-response] [--stateless]

It binds 127.0.0.1 on a port the kernel picks, writes ``LISTENING <port>``
on stderr, then serves the endpoint ``/mcp`` with uvicorn (both eras: a
request with the 2026-07-28 headers is stateless, ``initialize`` opens a
session). The socket is listening before the line is written, so a client
may connect at once. uvicorn waits at most one second for open streams
when it is asked to stop.
"""

from __future__ import annotations

import argparse
import runpy
import socket
import sys
from pathlib import Path

import uvicorn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json-response", action="store_true", help="answer initialize-era requests as JSON")
    parser.add_argument("--stateless", action="store_true", help="initialize era without sessions")
    args = parser.parse_args()
    server = runpy.run_path(str(Path(__file__).with_name("sdk_server.py")), run_name="peer")["server"]
    app = server.streamable_http_app(
        host="127.0.0.1", json_response=args.json_response, stateless_http=args.stateless
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"LISTENING {sock.getsockname()[1]}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

"""A small loopback web site for the server-card tests: serves what a routes file says.

``python card_server.py ROUTES.json`` listens on a free port of 127.0.0.1
and prints its port on stdout. The routes file (read again on every request,
so a test may rewrite it) maps a path to a response::

    {
        "/.well-known/ai-catalog.json": {
            "status": 200,
            "headers": {"Content-Type": "application/json"},
            "json": {...},
        }
    }

A response has a ``status`` (200), ``headers``, and a body: ``json`` (a
value, written as JSON), ``body`` (text), or ``repeat`` (``body`` written
that many times, with no ``Content-Length``: the end of the body is the end
of the connection). ``delay`` waits that many seconds before answering.
``{port}`` in a body or a header value is this server's port. A path not in
the file is a 404. ``GET /_log`` answers the requests seen so far (path and
``Accept``) as JSON.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROUTES = Path(sys.argv[1])
LOG: list[dict[str, str | None]] = []
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        port = str(self.server.server_address[1])
        if self.path == "/_log":
            with LOCK:
                data = json.dumps(LOG).encode()
            self._send(200, {"Content-Type": "application/json"}, data)
            return
        with LOCK:
            LOG.append({"path": self.path, "accept": self.headers.get("Accept")})
        route = json.loads(ROUTES.read_text()).get(self.path)
        if route is None:
            self._send(404, {"Content-Type": "text/plain"}, b"not found")
            return
        time.sleep(route.get("delay", 0))
        headers = {name: value.replace("{port}", port) for name, value in route.get("headers", {}).items()}
        if "json" in route:
            body = json.dumps(route["json"]).replace("{port}", port).encode()
        else:
            body = route.get("body", "").replace("{port}", port).encode()
        if "repeat" in route:
            self.send_response(route.get("status", 200))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for _ in range(route["repeat"]):
                    self.wfile.write(body)
            except OSError:
                pass  # the client stopped reading: what the test checks
            self.close_connection = True
            return
        self._send(route.get("status", 200), headers, body)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

"""Start the real peers in HTTP mode on a free loopback port, for the HTTP interop tests.

`serving(peer, mode)` starts a server and yields its URL:

* ``sdk``: our server on the official Python SDK, ``run("streamable-http")``
  on port 0 (both eras on one endpoint); the port is read from uvicorn's
  "Uvicorn running on" line (the SDK's log level is raised to INFO for it).
* ``everything``, mode ``streamableHttp`` (initialize era, ``/mcp``) or
  ``sse`` (HTTP+SSE of 2024-11-05, ``/sse``): the npm reference server
  listens on every interface by default; a preloaded script binds it to
  loopback and prints the real port.

Teardown kills the server (uvicorn does not exit on SIGTERM while a stream
is open), so a test never waits on it.
"""

from __future__ import annotations

import os
import re
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path

import trio

START_LIMIT = 30

_LOOPBACK_JS = r"""
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...a) {
  if (typeof a[0] === 'number' || (typeof a[0] === 'string' && /^\d+$/.test(a[0]))) {
    if (typeof a[1] !== 'string') a.splice(1, 0, '127.0.0.1');
    this.once('listening', () => process.stderr.write(`LISTENING ${this.address().port}\n`));
  }
  return listen.apply(this, a);
};
"""

_SDK_HTTP = (
    "import runpy, sys; ns = runpy.run_path(sys.argv[1], run_name='peer'); server = ns['server'];"
    " server.settings.log_level = 'INFO';"
    " server.run('streamable-http', host='127.0.0.1', port=0)"
)


def _environment(extra: dict[str, str]) -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environ.update(extra)
    return environ


@asynccontextmanager
async def serving(peer, mode: str, tmp_path: Path):
    """Start ``peer`` (a conftest `Peer`) over HTTP; yield its MCP URL."""
    if peer.name == "sdk":
        argv = [peer.cmd[0], "-c", _SDK_HTTP, peer.cmd[1]]
        pattern = re.compile(rb"Uvicorn running on (http://127\.0\.0\.1:\d+)")
        path = "/mcp"
        env = _environment(peer.env)
    elif peer.name == "everything":
        script = tmp_path / "loopback.cjs"
        script.write_text(_LOOPBACK_JS)
        argv = [peer.cmd[0], "--require", str(script), peer.cmd[1], mode]
        pattern = re.compile(rb"LISTENING (\d+)")
        path = "/mcp" if mode == "streamableHttp" else "/sse"
        env = _environment({**peer.env, "PORT": "0"})
    else:  # pragma: no cover - a test asked for a peer without HTTP
        raise ValueError(f"peer {peer.name!r} has no HTTP mode here")
    process = await trio.lowlevel.open_process(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    try:
        seen = b""
        match = None
        with trio.fail_after(START_LIMIT):
            assert process.stderr is not None
            while match is None:
                chunk = await process.stderr.receive_some(4096)
                if not chunk:
                    raise RuntimeError(
                        f"{peer.name} exited before listening: {seen.decode(errors='replace')}"
                    )
                seen += chunk
                match = pattern.search(seen)
        found = match.group(1).decode()
        base = found if found.startswith("http") else f"http://127.0.0.1:{found}"

        async def drain():
            # Keep reading stderr, so that a chatty server never blocks on it.
            assert process.stderr is not None
            while await process.stderr.receive_some(65536):
                pass

        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain)
            yield base + path
            nursery.cancel_scope.cancel()
    finally:
        process.kill()
        with trio.CancelScope(shield=True), trio.move_on_after(10):
            await process.wait()

"""Run an HTTP server as a real process on a free loopback port, and stop it without hanging.

`server_process` starts a command, waits for the line that names its port
(on stdout or stderr), and on exit stops it: SIGTERM, then SIGKILL after a
grace period. uvicorn-based servers ignore SIGTERM while an event stream is
open, so the grace period is what keeps a test's teardown bounded.

The process's output is drained all along by two threads (a full pipe would
block the server), and its last lines are kept for error messages.
"""

from __future__ import annotations

import collections
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: How long a server may take to say which port it listens on.
START_TIMEOUT = 30.0
#: How long a server may take to exit after SIGTERM before it is killed.
GRACE = 3.0

HOSTILE_SERVER = Path(__file__).resolve().parent / "servers" / "http_server.py"


@dataclass
class ServerProcess:
    """A running server: its process, its port and the last lines it wrote."""

    process: subprocess.Popen[bytes]
    port: int
    path: str = "/mcp"
    tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=50))

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.base + self.path

    def output(self) -> str:
        return "\n".join(self.tail)


def _drain(stream, name: str, lines: queue.Queue[tuple[str, str]], tail: collections.deque[str]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        tail.append(f"{name}: {line}")
        lines.put((name, line))
    stream.close()


def stop(process: subprocess.Popen[bytes], grace: float = GRACE) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; always reaps the process."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait(10)


@contextmanager
def server_process(
    cmd: Sequence[str],
    ready: str,
    *,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    path: str = "/mcp",
    timeout: float = START_TIMEOUT,
    grace: float = GRACE,
) -> Iterator[ServerProcess]:
    """Start ``cmd``; wait for a line matching ``ready``, whose first group is the port.

    Raises `RuntimeError` (with the process's last lines) when the process exits
    or stays silent for ``timeout`` seconds first.
    """
    pattern = re.compile(ready)
    process = subprocess.Popen(
        list(cmd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    tail: collections.deque[str] = collections.deque(maxlen=50)
    lines: queue.Queue[tuple[str, str]] = queue.Queue()
    readers = [
        threading.Thread(target=_drain, args=(stream, name, lines, tail), daemon=True)
        for stream, name in ((process.stdout, "stdout"), (process.stderr, "stderr"))
    ]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + timeout
        port = None
        while port is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"{cmd[0]} did not say its port within {timeout} s:\n" + "\n".join(tail))
            try:
                _, line = lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                if process.poll() is not None and not any(reader.is_alive() for reader in readers):
                    raise RuntimeError(
                        f"{cmd[0]} exited with status {process.returncode} before listening:\n"
                        + "\n".join(tail)
                    ) from None
                continue
            match = pattern.search(line)
            if match:
                port = int(match.group(1))
        yield ServerProcess(process, port, path, tail)
    finally:
        stop(process, grace)
        for reader in readers:
            reader.join(5)


@contextmanager
def hostile_server(
    era: str = "dual", scenario: str = "none", target: str = "fault"
) -> Iterator[ServerProcess]:
    """``tests/servers/http_server.py`` as a real process (see its docstring)."""
    cmd = [sys.executable, str(HOSTILE_SERVER), "--era", era, "--scenario", scenario, "--target", target]
    with server_process(cmd, r"^LISTENING (\d+)$") as server:
        yield server

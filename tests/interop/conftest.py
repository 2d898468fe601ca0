"""Fixtures of the interop tests: real MCP servers (``peers``) and a check of the wire (``wire``).

The peers are installed by ``nox -s peers`` (or ``python tests/interop/peers.py
install .peers``) into ``.peers/`` at the repository root, or into the folder
named by ``TRIO_MCP_PEERS_DIR``; ``nox -s tests`` installs them itself. A test
whose peer is not installed is skipped, saying how to install it, unless
``TRIO_MCP_REQUIRE_PEERS=1``, which makes it fail instead (CI sets it).

Every test in this folder carries the ``interop`` marker.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opening_support import process_client
from wiretap import WireTap

HERE = Path(__file__).resolve().parent
PEERS_DIR = Path(os.environ.get("TRIO_MCP_PEERS_DIR") or HERE.parents[1] / ".peers")
INSTALL_HINT = "install them with `nox -s peers` (or `python tests/interop/peers.py install .peers`)"
# The servers' stderr goes to this logger, which pytest shows for a failed test.
_stderr_logger = logging.getLogger("interop.stderr")
_stderr_logger.setLevel(logging.INFO)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.interop)


def _unavailable(reason: str) -> None:
    if os.environ.get("TRIO_MCP_REQUIRE_PEERS") == "1":
        pytest.fail(f"{reason} (and TRIO_MCP_REQUIRE_PEERS=1)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Peer:
    """One installed MCP server: how to start it and which protocol era it speaks."""

    name: str
    cmd: tuple[str, ...]
    env: dict[str, str]
    era: str  # "legacy" or "dual" (2026-07-28 and the initialize era)

    @property
    def command(self) -> str:
        return self.cmd[0]

    @property
    def args(self) -> list[str]:
        return list(self.cmd[1:])

    def client(self, *extra_args: str, **options: Any) -> Any:
        """``trio_mcp.open_stdio_client`` for this server, extra arguments appended."""
        options.setdefault("env", self.env)
        options.setdefault("on_stderr", lambda line: _stderr_logger.info("%s: %s", self.name, line))
        return process_client(self.command, [*self.args, *extra_args], **options)


class Peers:
    """The manifest ``peers.json``: ``peers["sdk"]`` is a `Peer`, or skips the test."""

    def __init__(self, entries: dict[str, dict[str, Any]]) -> None:
        self._entries = entries

    def __getitem__(self, name: str) -> Peer:
        entry = self._entries.get(name)
        if entry is None:
            _unavailable(f"peer {name!r} is not in {PEERS_DIR / 'peers.json'}; {INSTALL_HINT}")
        assert entry is not None
        if not entry.get("cmd"):
            _unavailable(f"peer {name!r} is not installed: {entry.get('unavailable', 'no command')}")
        cmd = tuple(entry["cmd"])
        if not Path(cmd[0]).exists() or (
            len(cmd) > 1 and cmd[1].startswith("/") and not Path(cmd[1]).exists()
        ):
            _unavailable(f"peer {name!r} is missing files ({' '.join(cmd[:2])}); {INSTALL_HINT} again")
        return Peer(name, cmd, dict(entry.get("env") or {}), entry["era"])


@pytest.fixture(scope="session")
def _peers_manifest() -> dict[str, dict[str, Any]] | None:
    try:
        return json.loads((PEERS_DIR / "peers.json").read_text())
    except FileNotFoundError:
        return None


@pytest.fixture
def peers(_peers_manifest: dict[str, dict[str, Any]] | None) -> Peers:
    """The installed MCP servers; a test that asks for a missing one is skipped (or fails, see above).

    Look the servers up here, in fixtures, not in an async test's body: there
    pytest-trio loses the reason of a skip.
    """
    if _peers_manifest is None:
        _unavailable(f"the interop peers are not installed (no {PEERS_DIR / 'peers.json'}); {INSTALL_HINT}")
    assert _peers_manifest is not None
    return Peers(_peers_manifest)


@pytest.fixture
def sdk_server(peers: Peers) -> Peer:
    """Our test server on the official Python SDK (servers/sdk_server.py): both eras, every feature."""
    return peers["sdk"]


@pytest.fixture
def apps_server(sdk_server: Peer) -> Peer:
    """An MCP Apps server (servers/apps_server.py) on the official Python SDK, run by the ``sdk`` peer's Python."""
    return Peer(
        "apps", (sdk_server.command, str(HERE / "servers" / "apps_server.py")), sdk_server.env, "dual"
    )


@pytest.fixture
def ext_apps_server(peers: Peers) -> Peer:
    """ext-apps' basic MCP Apps example (npm ``@modelcontextprotocol/server-basic-vanillajs``): the initialize era."""
    return peers["ext-apps-basic"]


@pytest.fixture
def time_server(peers: Peers) -> Peer:
    """mcp-server-time, on the Python SDK's low-level API: both eras."""
    return peers["time"]


@pytest.fixture
def everything_server(peers: Peers) -> Peer:
    """@modelcontextprotocol/server-everything (TypeScript SDK): 2025-11-25 and older."""
    return peers["everything"]


@pytest.fixture
def filesystem_server(peers: Peers) -> Peer:
    """@modelcontextprotocol/server-filesystem (TypeScript SDK); allowed directories are arguments."""
    return peers["filesystem"]


@pytest.fixture
def peer(peers: Peers, request: pytest.FixtureRequest) -> Peer:
    """The server named by an indirect parameter: ``@pytest.mark.parametrize("peer", [...], indirect=True)``."""
    return peers[request.param]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """Records every line the client writes; at the end of the test, checks each one.

    The test says which revision was negotiated, for example
    ``wire.check(client.protocol_version, client)``; that checks what was
    written so far, and the same check runs again over everything once the
    test is over. A connection that wrote lines without such a call fails the
    test (unless the test failed already). See `wiretap` for what is checked.
    """
    tap = WireTap.install(monkeypatch)
    yield tap
    tap.check_all(strict=not request.node.stash.get(_CALL_FAILED, False))

"""Which era and revision the client ends up with, against real servers.

``protocol="auto"`` probes with ``server/discover``: the Python SDK servers
answer it (2026-07-28), the TypeScript ones refuse it (``-32601``) and get
``initialize``. A pinned revision is offered as it is.
"""

from __future__ import annotations

import pytest
import trio

import trio_mcp

MODERN = "2026-07-28"
TIMEOUT = 30


@pytest.mark.parametrize(
    ("peer", "era", "version"),
    [
        ("sdk", "modern", MODERN),
        ("time", "modern", MODERN),
        ("everything", "legacy", "2025-11-25"),
        ("filesystem", "legacy", "2025-11-25"),
    ],
    indirect=["peer"],
)
async def test_auto_picks_the_servers_era(wire, tmp_path, peer, era, version):
    extra = [str(tmp_path)] if peer.name == "filesystem" else []
    with trio.fail_after(TIMEOUT):
        async with peer.client(*extra, protocol="auto") as client:
            assert (client.era, client.protocol_version) == (era, version)
            assert await client.list_tools()
            wire.check(client.protocol_version, client)
    methods = [m.get("method") for m in wire.written(client)]
    assert methods[0] == "server/discover"
    if era == "legacy":
        assert methods[1:3] == ["initialize", "notifications/initialized"]
    else:
        assert "initialize" not in methods


@pytest.mark.parametrize(
    ("peer", "offered", "version"),
    [
        ("everything", "2025-06-18", "2025-06-18"),
        ("everything", "2024-11-05", "2024-11-05"),
        ("sdk", "2025-03-26", "2025-03-26"),
        ("sdk", "2024-11-05", "2024-11-05"),
    ],
    indirect=["peer"],
)
async def test_pinned_legacy_revision(wire, peer, offered, version):
    """Older revisions work too, and what the client writes fits each one's schema."""
    with trio.fail_after(TIMEOUT):
        async with peer.client(protocol=offered) as client:
            assert (client.era, client.protocol_version) == ("legacy", version)
            await client.ping()
            assert await client.list_tools()
            wire.check(client.protocol_version, client)
    (initialize,) = [m for m in wire.written(client) if m.get("method") == "initialize"]
    assert initialize["params"]["protocolVersion"] == offered


async def test_pinned_modern_against_a_legacy_server(everything_server, wire):
    with trio.fail_after(TIMEOUT):
        with pytest.raises(trio_mcp.VersionMismatch):
            async with everything_server.client(protocol=MODERN):
                pass
    wire.check(MODERN)
    assert [m.get("method") for m in wire.written()] == ["server/discover"]


async def test_pinned_modern_against_the_sdk_server(sdk_server, wire):
    with trio.fail_after(TIMEOUT):
        async with sdk_server.client(protocol=MODERN) as client:
            assert (client.era, client.protocol_version) == ("modern", MODERN)
            assert (await client.call_tool("echo", {"text": "x"})).text == "x"
            wire.check(client.protocol_version, client)

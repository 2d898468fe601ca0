"""What the transport writes is valid JSON-RPC per the official MCP schemas.

A real server (``tests/servers/wire_server.py``) records every line the
transport writes: requests, a notification, the ``notifications/cancelled``
of an abandoned request, and the answers to the server's own requests (the
automatic ``ping`` answer and the ``-32601`` refusal). Each line is checked
against the schema of every revision it belongs to.

The schemas are read from ``mcp-schema/`` in the folder beside the repository
(``../shared/mcp-schema``), or from the folder named by ``MCP_SCHEMA_DIR``;
without them these tests are skipped, saying why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio
from schema_support import NO_SCHEMAS, SCHEMA_DIR, envelope_definition, validator

import trio_mcp
from trio_mcp import RequestTimeout

jsonschema = pytest.importorskip("jsonschema")

SERVER = Path(__file__).parent / "servers" / "wire_server.py"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)

pytestmark = pytest.mark.skipif(not SCHEMA_DIR.is_dir(), reason=NO_SCHEMAS)


def check(message: dict, revision: str, definition: str) -> None:
    """Validate ``message`` against one definition of one revision's schema."""
    # Older revisions name two of the envelopes differently.
    validator(revision, envelope_definition(revision, definition)).validate(message)


async def written_lines() -> list[str]:
    """Drive the transport through every kind of line it writes; return them as the server read them."""
    with trio.fail_after(10):
        async with trio_mcp.open_session(
            trio_mcp.ProcessTarget(sys.executable, [str(SERVER)]),
            options=trio_mcp.SessionOptions(request_timeout=0.3, on_log=lambda _: None),
        ) as wire:
            await wire.request("tools/list", {"_meta": {"progressToken": "p1"}})
            await wire.request("ping")
            await wire.notify("notifications/initialized")
            with pytest.raises(RequestTimeout):
                await wire.request("hang", {})
            result = await wire.request("dump")
    return result["lines"]


async def test_every_line_is_one_json_rpc_message_of_every_revision():
    """Each line written is compact JSON ending in one LF, a JSON-RPC message of every revision."""
    lines = await written_lines()
    assert len(lines) >= 6
    for line in lines:
        assert line.endswith("\n")
        assert "\n" not in line[:-1]
        message = json.loads(line)
        is_answer = "method" not in message
        for revision in LEGACY + ((), MODERN)[not is_answer]:
            check(message, revision, "JSONRPCMessage")


async def test_each_kind_of_line_matches_its_definition():
    """Requests, notifications, the cancellation and both answers match their own schema definitions."""
    by_kind: dict[str, dict] = {}
    for line in await written_lines():
        message = json.loads(line)
        if message.get("method") == "notifications/cancelled":
            by_kind["cancelled"] = message
        elif "method" in message:
            by_kind.setdefault("request" if "id" in message else "notification", message)
        elif "error" in message:
            by_kind["error"] = message
        else:
            by_kind["result"] = message
    assert set(by_kind) == {"request", "notification", "cancelled", "error", "result"}
    for revision in LEGACY + MODERN:
        check(by_kind["request"], revision, "JSONRPCRequest")
        check(by_kind["notification"], revision, "JSONRPCNotification")
        check(by_kind["cancelled"], revision, "CancelledNotification")
    # Answers to server requests exist in the legacy revisions only: from
    # 2026-07-28 on, servers send no requests and clients no responses.
    for revision in LEGACY:
        check(by_kind["error"], revision, "JSONRPCErrorResponse")
        check(by_kind["result"], revision, "JSONRPCResultResponse")
    assert by_kind["result"] == {"jsonrpc": "2.0", "id": "s1", "result": {}}
    assert by_kind["error"]["id"] == "s2"
    assert by_kind["error"]["error"]["code"] == -32601


async def test_a_check_can_fail():
    """The schema check itself rejects a malformed message (so the tests above have teeth)."""
    with pytest.raises(jsonschema.ValidationError):
        check(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
            "2026-07-28",
            "CancelledNotification",
        )

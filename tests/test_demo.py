"""The demo server, ``python -m trio_mcp.demo``, as a real process.

Two ways in:

* raw JSON lines (`raw_demo`), to see exactly what the server answers:
  era choice and its errors, every method, progress, logs, the multi
  round-trip ``ask`` and its legacy request to the client, cancellation,
  concurrency, end of input, signals, and a clean stdout;
* ``trio_mcp.open_stdio_client`` in both eras (``protocol="auto"`` finds
  2026-07-28; pinning ``"2025-11-25"`` or ``"2025-06-18"`` gives the
  initialize era), with hooks and callbacks, as users will run it.

Every line the server writes is checked against the official schema of the
revision in use (``../shared/mcp-schema`` beside the repository, or
``MCP_SCHEMA_DIR``): each result against its own definition
(``CallToolResult``, ``DiscoverResult``, ``InitializeResult``, ...), errors,
notifications and the server's own requests too. Without the schemas (or
without jsonschema) the schema tests are skipped, saying why; the others then
check behaviour only.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import ast_support
import pytest
import trio
import trio.testing
from client_support import Collector
from opening_support import process_client
from schema_support import by_method, defs, envelope_definition, result_definition, schema_problem, validator

import trio_mcp
import trio_mcp.demo
from trio_mcp import RpcError

try:
    import jsonschema
except ImportError:  # pragma: no cover - a test dependency
    jsonschema = None

#: Seconds any one test may take before it counts as hung.
LIMIT = 20

REPO = Path(trio_mcp.__file__).resolve().parents[1]
DEMO = [sys.executable, "-m", "trio_mcp.demo"]
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
TOOLS = ["echo", "add", "slow", "ask", "report", "batch"]

SCHEMA_PROBLEM = schema_problem()
needs_schemas = pytest.mark.skipif(SCHEMA_PROBLEM is not None, reason=str(SCHEMA_PROBLEM))


# ------------------------------------------------------------ schema check


_ERRORS_2026 = {
    -32700: "ParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}


def check_server_lines(lines: list[bytes], revision: str, methods: dict[Any, str]) -> None:
    """Check what the server wrote against the schema of ``revision``.

    ``methods`` maps the ids of the client's requests (as ``(type, id)``) to
    their methods, to find each result's definition.
    """
    assert SCHEMA_PROBLEM is None, SCHEMA_PROBLEM
    notifications = by_method(revision, "ServerNotification")
    requests = by_method(revision, "ServerRequest")
    for line in lines:
        assert line, "an empty line"
        assert b"\n" not in line, line
        assert not line.endswith(b"\r"), line
        message = json.loads(line)
        assert isinstance(message, dict), line
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            kind = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
            table = requests if "id" in message else notifications
            assert message["method"] in table, f"{revision} has no server {kind} {message['method']!r}"
            validator(revision, kind).validate(message)
            validator(revision, table[message["method"]]).validate(message)
        elif "error" in message:
            validator(revision, envelope_definition(revision, "JSONRPCErrorResponse")).validate(message)
            code = message["error"]["code"]
            if revision == MODERN and code in _ERRORS_2026:
                definition = _ERRORS_2026[code]
                target = (
                    message
                    if "error" in defs(revision)[definition].get("properties", {})
                    else message["error"]
                )
                validator(revision, definition).validate(target)
        else:
            validator(revision, envelope_definition(revision, "JSONRPCResultResponse")).validate(message)
            method = methods[(type(message["id"]).__name__, message["id"])]
            result = message["result"]
            if revision == MODERN:
                assert result.get("resultType") in ("complete", "input_required"), message
                assert result["_meta"][SERVER_INFO]["name"] == "trio-mcp-demo", message
                definition = (
                    "InputRequiredResult"
                    if result["resultType"] == "input_required"
                    else result_definition(revision, method)
                )
            else:
                assert "resultType" not in result, message
                definition = result_definition(revision, method)
            validator(revision, definition).validate(result)


def _ids(messages: list[dict[str, Any]]) -> dict[Any, str]:
    return {
        (type(m["id"]).__name__, m["id"]): m["method"]
        for m in messages
        if isinstance(m, dict) and "id" in m and "method" in m
    }


# --------------------------------------------------------------- raw driver


def meta(caps: dict | None = None, **extra: Any) -> dict[str, Any]:
    """A 2026-07-28 ``_meta`` envelope."""
    envelope = {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: caps if caps is not None else {},
        CLIENT_INFO: {"name": "test", "version": "1"},
    }
    envelope.update(extra)
    return envelope


def modern_params(params: dict | None = None, caps: dict | None = None, **extra: Any) -> dict[str, Any]:
    return {**(params or {}), "_meta": meta(caps, **extra)}


class RawDemo:
    """A demo process spoken to in raw JSON lines; everything it writes is kept."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self.sent: list[dict[str, Any]] = []
        self.stderr = b""
        self._buffer = b""
        self._next_id = 1000
        self._seen = 0
        self.eof = False

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]

    async def send(self, message: dict[str, Any] | bytes) -> None:
        if isinstance(message, dict):
            self.sent.append(message)
            data = json.dumps(message).encode() + b"\n"
        else:
            data = message
        await self.process.stdin.send_all(data)

    async def request(self, method: str, params: dict | None = None, *, request_id: Any = None) -> Any:
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return request_id

    async def notify(self, method: str, params: dict | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def read(self) -> dict[str, Any] | None:
        """The next message the server writes (None at the end of its stdout)."""
        while b"\n" not in self._buffer:
            data = await self.process.stdout.receive_some()
            if not data:
                self.eof = True
                assert not self._buffer, f"unterminated last line {self._buffer!r}"
                return None
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line)
        return json.loads(line)

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """Read until the response to ``request_id``; what came before stays in `messages`."""
        for message in self.messages[self._seen :]:
            if "method" not in message and message.get("id") == request_id:
                return message
        while True:
            message = await self.read()
            assert message is not None, f"the server exited without answering {request_id!r}"
            if "method" not in message and message.get("id") == request_id:
                return message

    async def call(self, method: str, params: dict | None = None) -> dict[str, Any]:
        """Send a request and return its response (the whole message)."""
        return await self.answer(await self.request(method, params))

    async def result(self, method: str, params: dict | None = None) -> dict[str, Any]:
        response = await self.call(method, params)
        assert "result" in response, response
        return response["result"]

    async def error(self, method: str, params: dict | None = None) -> dict[str, Any]:
        response = await self.call(method, params)
        assert "error" in response, response
        return response["error"]

    def since(self, request_id: Any) -> list[dict[str, Any]]:
        """The messages the server wrote before its answer to ``request_id``, after the previous such answer."""
        out: list[dict[str, Any]] = []
        for message in self.messages:
            if "method" not in message:
                if message.get("id") == request_id:
                    return out
                out = []
            else:
                out.append(message)
        return out

    def notes(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("method") == method and "id" not in m]

    async def finish(self) -> int:
        """Close stdin, read stdout to its end, and return the exit status."""
        await self.process.stdin.aclose()
        while await self.read() is not None:
            pass
        return await self.process.wait()

    def check(self, revision: str) -> None:
        check_server_lines(self.lines, revision, _ids(self.sent))


@asynccontextmanager
async def raw_demo(*args: str):
    """Start the demo; on leaving, close its stdin and expect a clean exit (status 0, quiet stderr)."""
    process = await trio.lowlevel.open_process(
        [*DEMO, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **ENV},
    )
    demo = RawDemo(process)

    async def drain_stderr() -> None:
        async for chunk in process.stderr:
            demo.stderr += chunk

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain_stderr)
            yield demo
            if process.returncode is None:
                status = await demo.finish()
            else:
                status = process.returncode
            assert status == 0, demo.stderr.decode()
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
    if "-v" not in args and "--verbose" not in args:
        assert demo.stderr == b"", demo.stderr.decode()


async def initialized(demo: RawDemo, version: str = "2025-11-25", caps: dict | None = None) -> dict[str, Any]:
    """Run the initialize handshake; return the InitializeResult."""
    result = await demo.result(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": caps or {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    )
    await demo.notify("notifications/initialized")
    return result


def text_of(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    assert block["type"] == "text"
    return block["text"]


# ----------------------------------------------------------- modern, raw


async def test_discover_locks_the_2026_era_and_describes_the_server():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            result = await demo.result("server/discover", modern_params())
            assert result["resultType"] == "complete"
            assert result["supportedVersions"] == [MODERN]
            assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "completions", "logging"}
            assert "echo" in result["instructions"]
            assert result["ttlMs"] > 0
            assert result["cacheScope"] == "public"
            info = result["_meta"][SERVER_INFO]
            assert info["name"] == "trio-mcp-demo"
            assert info["version"] == trio_mcp.__version__
            # Locked: initialize is refused with the modern version error.
            error = await demo.error(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            )
            assert error["code"] == -32022
            assert error["data"] == {"supported": [MODERN], "requested": "2025-11-25"}
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_modern_listings_and_their_schemas():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            tools = await demo.result("tools/list", modern_params())
            prompts = await demo.result("prompts/list", modern_params())
            resources = await demo.result("resources/list", modern_params())
            templates = await demo.result("resources/templates/list", modern_params())
    for listing in (tools, prompts, resources, templates):
        assert listing["resultType"] == "complete"
        assert listing["ttlMs"] > 0
        assert listing["cacheScope"] == "public"
        assert "nextCursor" not in listing
    assert [tool["name"] for tool in tools["tools"]] == TOOLS
    for tool in tools["tools"]:
        assert tool["title"]
        assert tool["description"]
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            assert prop["title"], (tool["name"], name)
            assert prop["description"], (tool["name"], name)
        if jsonschema is not None:
            jsonschema.Draft202012Validator.check_schema(schema)
    add = next(tool for tool in tools["tools"] if tool["name"] == "add")
    assert add["outputSchema"]["required"] == ["sum"]
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(add["outputSchema"])
    (prompt,) = prompts["prompts"]
    assert prompt["name"] == "greet"
    assert prompt["arguments"] == [
        {"name": "name", "title": "Name", "description": "Who to greet.", "required": True}
    ]
    (resource,) = resources["resources"]
    assert resource["uri"] == "demo://readme"
    assert resource["mimeType"] == "text/markdown"
    (template,) = templates["resourceTemplates"]
    assert template["uriTemplate"] == "demo://greeting/{name}"
    if SCHEMA_PROBLEM is None:
        demo.check(MODERN)


async def test_modern_tools_resources_prompt_and_completion():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            echo = await demo.result(
                "tools/call", modern_params({"name": "echo", "arguments": {"text": "hi ☃"}})
            )
            assert text_of(echo) == "hi ☃"
            assert "isError" not in echo
            add = await demo.result(
                "tools/call", modern_params({"name": "add", "arguments": {"a": 2, "b": 3.5}})
            )
            assert text_of(add) == "5.5"
            assert add["structuredContent"] == {"sum": 5.5}
            ints = await demo.result(
                "tools/call", modern_params({"name": "add", "arguments": {"a": -2, "b": 3}})
            )
            assert ints["structuredContent"] == {"sum": 1}
            slow = await demo.result(
                "tools/call", modern_params({"name": "slow", "arguments": {"steps": 1, "delay": 0}})
            )
            assert text_of(slow) == "Done: 1 steps."

            readme = await demo.result("resources/read", modern_params({"uri": "demo://readme"}))
            (contents,) = readme["contents"]
            assert contents["mimeType"] == "text/markdown"
            assert "demo" in contents["text"]
            assert readme["ttlMs"] > 0
            greeting = await demo.result(
                "resources/read", modern_params({"uri": "demo://greeting/Grace%20Hopper"})
            )
            assert greeting["contents"] == [
                {
                    "uri": "demo://greeting/Grace%20Hopper",
                    "mimeType": "text/plain",
                    "text": "Hello, Grace Hopper!",
                }
            ]

            prompt = await demo.result(
                "prompts/get", modern_params({"name": "greet", "arguments": {"name": "Ada"}})
            )
            (message,) = prompt["messages"]
            assert message["role"] == "user"
            assert "Ada" in message["content"]["text"]

            completion = await demo.result(
                "completion/complete",
                modern_params(
                    {
                        "ref": {"type": "ref/prompt", "name": "greet"},
                        "argument": {"name": "name", "value": "a"},
                    }
                ),
            )
            assert completion["completion"] == {
                "values": ["Ada", "Alan", "Alice"],
                "total": 3,
                "hasMore": False,
            }
            by_template = await demo.result(
                "completion/complete",
                modern_params(
                    {
                        "ref": {"type": "ref/resource", "uri": "demo://greeting/{name}"},
                        "argument": {"name": "name", "value": "GR"},
                    }
                ),
            )
            assert by_template["completion"]["values"] == ["Grace"]
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_modern_errors():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            # The first request locks the era even when its version is wrong.
            error = await demo.error("tools/list", {"_meta": {**meta(), PROTOCOL_VERSION: "2099-01-01"}})
            assert error["code"] == -32022
            assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
            missing = await demo.error("tools/list", {"_meta": {PROTOCOL_VERSION: MODERN}})
            assert missing["code"] == -32602
            assert CLIENT_CAPABILITIES in missing["message"]
            assert (await demo.error("tools/list", {}))["code"] == -32602
            assert (await demo.error("tools/list"))["code"] == -32602
            assert (await demo.error("tools/list", modern_params(**{LOG_LEVEL: "loud"})))["code"] == -32602
            assert (await demo.error("nope/nothing", modern_params()))["code"] == -32601
            # The 2026-07-28 era has no ping: unknown, like any other method.
            assert (await demo.error("ping", modern_params()))["code"] == -32601
            assert (await demo.error("logging/setLevel", modern_params({"level": "info"})))["code"] == -32601
            assert (await demo.error("resources/subscribe", modern_params({"uri": "demo://readme"})))[
                "code"
            ] == -32601

            unknown = await demo.error("tools/call", modern_params({"name": "nope"}))
            assert unknown["code"] == -32602
            assert "nope" in unknown["message"]
            assert (await demo.error("tools/call", modern_params({"name": "echo", "arguments": [1]})))[
                "code"
            ] == -32602
            assert (await demo.error("tools/call", modern_params({"arguments": {}})))["code"] == -32602

            for arguments, expected in [
                ({}, "missing argument 'text'"),
                ({"text": 3}, "'text' must be a string, not an integer"),
                ({"text": "x", "extra": 1}, "unknown argument 'extra'"),
            ]:
                result = await demo.result(
                    "tools/call", modern_params({"name": "echo", "arguments": arguments})
                )
                assert result["isError"] is True
                assert expected in text_of(result)
            for arguments, expected in [
                ({"a": 1, "b": True}, "'b' must be a number, not a boolean"),
                ({"a": 2**62, "b": 2**62}, "does not fit"),
                ({"a": 1e308, "b": 1e308}, "too large"),
            ]:
                result = await demo.result(
                    "tools/call", modern_params({"name": "add", "arguments": arguments})
                )
                assert result["isError"] is True
                assert expected in text_of(result)
            for arguments, expected in [
                ({"steps": 0}, "'steps' must be at least 1"),
                ({"steps": 1.5}, "'steps' must be an integer"),
                ({"delay": 60}, "'delay' must be at most 10"),
            ]:
                result = await demo.result(
                    "tools/call", modern_params({"name": "slow", "arguments": arguments})
                )
                assert result["isError"] is True
                assert expected in text_of(result)

            assert (await demo.error("prompts/get", modern_params({"name": "nope"})))["code"] == -32602
            assert (await demo.error("prompts/get", modern_params({"name": "greet"})))["code"] == -32602
            not_found = await demo.error("resources/read", modern_params({"uri": "demo://nothing"}))
            assert not_found["code"] == -32602
            assert not_found["data"] == {"uri": "demo://nothing"}
            assert (await demo.error("tools/list", modern_params({"cursor": "x"})))["code"] == -32602
            assert (
                await demo.error(
                    "completion/complete",
                    modern_params(
                        {
                            "ref": {"type": "ref/prompt", "name": "nope"},
                            "argument": {"name": "name", "value": ""},
                        }
                    ),
                )
            )["code"] == -32602
            # Params that are not an object.
            assert (await demo.error("tools/list", [1, 2]))["code"] == -32602
            # Still serving after all that.
            assert (await demo.result("tools/list", modern_params()))["tools"]
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_modern_progress_and_logs_belong_to_the_request():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            args = {"name": "slow", "arguments": {"steps": 3, "delay": 0.01}}
            first = await demo.request(
                "tools/call", modern_params(args, progressToken="p1", **{LOG_LEVEL: "info"})
            )
            response = await demo.answer(first)
            assert text_of(response["result"]) == "Done: 3 steps."
            before = demo.since(first)
            progress = [m["params"] for m in before if m["method"] == "notifications/progress"]
            assert progress == [
                {"progressToken": "p1", "progress": step, "total": 3, "message": f"Step {step} of 3"}
                for step in (1, 2, 3)
            ]
            logs = [m["params"] for m in before if m["method"] == "notifications/message"]
            assert [log["level"] for log in logs] == ["info", "info"]
            assert all(log["logger"] == "trio-mcp-demo" for log in logs)
            assert before[0]["method"] == "notifications/message"
            assert before[-1]["method"] == "notifications/message"

            # No logLevel, or a higher one: no logs; no progressToken: no progress.
            count = len(demo.lines)
            await demo.result("tools/call", modern_params(args))
            await demo.result("tools/call", modern_params(args, **{LOG_LEVEL: "warning"}))
            assert len(demo.lines) == count + 2
            # An integer token works too.
            await demo.result("tools/call", modern_params(args, progressToken=7))
            assert [m["params"]["progressToken"] for m in demo.notes("notifications/progress")][-3:] == [
                7,
                7,
                7,
            ]
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_modern_ask_is_a_multi_round_trip():
    caps = {"elicitation": {"form": {}}}
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            params = {"name": "ask", "arguments": {}}
            refused = await demo.error("tools/call", modern_params(params))
            assert refused["code"] == -32021
            assert refused["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
            url_only = await demo.error("tools/call", modern_params(params, {"elicitation": {"url": {}}}))
            assert url_only["code"] == -32021

            asked = await demo.result("tools/call", modern_params(params, caps, **{LOG_LEVEL: "info"}))
            assert asked["resultType"] == "input_required"
            assert "ttlMs" not in asked
            (key,) = asked["inputRequests"]
            request = asked["inputRequests"][key]
            assert request["method"] == "elicitation/create"
            assert request["params"]["mode"] == "form"
            assert request["params"]["message"] == "What is your name?"
            assert request["params"]["requestedSchema"]["required"] == ["name"]
            state = asked["requestState"]
            assert isinstance(state, str)

            def retry(answer: dict | None, request_state: str | None = state, **extra: Any) -> dict:
                round_params: dict[str, Any] = dict(params)
                if answer is not None:
                    round_params["inputResponses"] = {key: answer}
                if request_state is not None:
                    round_params["requestState"] = request_state
                return modern_params(round_params, caps, **extra)

            done = await demo.result("tools/call", retry({"action": "accept", "content": {"name": "Ada"}}))
            assert done["resultType"] == "complete"
            assert text_of(done) == "Hello, Ada!"
            declined = await demo.result("tools/call", retry({"action": "decline"}))
            assert "declined" in text_of(declined)
            assert "isError" not in declined
            cancelled = await demo.result("tools/call", retry({"action": "cancel"}))
            assert "dismissed" in text_of(cancelled)
            empty = await demo.result("tools/call", retry({"action": "accept", "content": {"name": " "}}))
            assert empty["isError"] is True
            # The answer is missing: asked again.
            again = await demo.result("tools/call", retry(None))
            assert again["resultType"] == "input_required"
            assert again["inputRequests"][key]["method"] == "elicitation/create"
            # requestState is checked.
            assert (await demo.error("tools/call", retry({"action": "decline"}, None)))["code"] == -32602
            assert (await demo.error("tools/call", retry({"action": "decline"}, "forged")))["code"] == -32602
            # The question can be chosen.
            custom = await demo.result(
                "tools/call", modern_params({"name": "ask", "arguments": {"question": "Who are you?"}}, caps)
            )
            assert custom["inputRequests"][key]["params"]["message"] == "Who are you?"
            # `{}` declares form mode.
            assert (await demo.result("tools/call", modern_params(params, {"elicitation": {}})))[
                "resultType"
            ] == "input_required"
        logs = [note["params"]["data"] for note in demo.notes("notifications/message")]
        assert logs == ["ask: asking the user for their name"]
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_requests_run_concurrently_and_a_cancelled_one_answers_nothing():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            # Would finish well within the end-of-input grace if it were not cancelled.
            slow = await demo.request(
                "tools/call",
                modern_params({"name": "slow", "arguments": {"steps": 3, "delay": 0.3}}, progressToken="s"),
            )
            echo = await demo.request(
                "tools/call", modern_params({"name": "echo", "arguments": {"text": "first"}})
            )
            response = await demo.answer(echo)
            assert text_of(response["result"]) == "first"
            assert not any(m.get("id") == slow for m in demo.messages)
            while not demo.notes("notifications/progress"):
                assert await demo.read() is not None
            await demo.notify("notifications/cancelled", {"requestId": slow, "reason": "test"})
            # Cancelling what is unknown or done is harmless.
            await demo.notify("notifications/cancelled", {"requestId": echo})
            await demo.notify("notifications/cancelled", {"requestId": "unknown"})
            after = await demo.result(
                "tools/call", modern_params({"name": "echo", "arguments": {"text": "after"}})
            )
            assert text_of(after) == "after"
            assert await demo.finish() == 0
        assert not any(m.get("id") == slow and "method" not in m for m in demo.messages)
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_string_and_integer_ids_are_distinct():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await demo.request(
                "tools/call", modern_params({"name": "echo", "arguments": {"text": "int"}}), request_id=1
            )
            await demo.request(
                "tools/call", modern_params({"name": "echo", "arguments": {"text": "str"}}), request_id="1"
            )
            assert await demo.finish() == 0
        answers = {(type(m["id"]), m["id"]): text_of(m["result"]) for m in demo.messages}
        assert answers == {(int, 1): "int", (str, "1"): "str"}


# ----------------------------------------------------------- legacy, raw


@pytest.mark.parametrize(
    ("requested", "chosen"),
    [(version, version) for version in LEGACY] + [("2099-01-01", "2025-11-25"), (MODERN, "2025-11-25")],
)
async def test_initialize_negotiates_a_legacy_version(requested, chosen):
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            result = await initialized(demo, requested)
            assert result["protocolVersion"] == chosen
            assert result["serverInfo"]["name"] == "trio-mcp-demo"
            assert "echo" in result["instructions"]
            assert ("completions" in result["capabilities"]) == (chosen >= "2025-03-26")
            assert ("title" in result["serverInfo"]) == (chosen >= "2025-06-18")
            tools = (await demo.result("tools/list"))["tools"]
            assert [tool["name"] for tool in tools] == TOOLS
            assert all(("title" in tool) == (chosen >= "2025-06-18") for tool in tools)
            assert all(("annotations" in tool) == (chosen >= "2025-03-26") for tool in tools)
            add = await demo.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            assert text_of(add) == "3"
            assert ("structuredContent" in add) == (chosen >= "2025-06-18")
            await demo.result("prompts/list")
            await demo.result("resources/list")
            await demo.result("resources/templates/list")
            await demo.result("resources/read", {"uri": "demo://readme"})
            await demo.result("prompts/get", {"name": "greet", "arguments": {"name": "Bob"}})
            await demo.result(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "B"}},
            )
            await demo.result("logging/setLevel", {"level": "debug"})
            await demo.result(
                "tools/call",
                {"name": "slow", "arguments": {"steps": 2, "delay": 0}, "_meta": {"progressToken": 1}},
            )
            await demo.result("tools/call", {"name": "ask", "arguments": {}})
            await demo.result("ping")
        progress = [note["params"] for note in demo.notes("notifications/progress")]
        assert [p["progress"] for p in progress] == [1, 2]
        assert all(("message" in p) == (chosen >= "2025-03-26") for p in progress)
        if SCHEMA_PROBLEM is None:
            demo.check(chosen)


async def test_legacy_errors():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            # No era yet: anything but initialize (or the modern envelope) is refused, and nothing is locked.
            assert (await demo.error("tools/list"))["code"] == -32600
            assert (await demo.error("initialize", {"capabilities": {}}))["code"] == -32602
            await initialized(demo)
            assert (await demo.error("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))[
                "code"
            ] == -32600
            envelope = await demo.error("tools/list", modern_params())
            assert envelope["code"] == -32600
            assert "initialize era" in envelope["message"]
            assert (await demo.error("server/discover"))["code"] == -32601
            assert (await demo.error("nope"))["code"] == -32601
            assert (await demo.error("tools/call", {"name": "nope"}))["code"] == -32602
            not_found = await demo.error("resources/read", {"uri": "demo://greeting/"})
            assert not_found["code"] == -32002
            assert not_found["data"] == {"uri": "demo://greeting/"}
            assert (await demo.error("logging/setLevel", {"level": "loud"}))["code"] == -32602
            # A progress token in _meta is not the modern envelope.
            echo = await demo.result(
                "tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": {"progressToken": "t"}}
            )
            assert text_of(echo) == "x"
        if SCHEMA_PROBLEM is None:
            demo.check("2025-11-25")


async def test_legacy_logging_follows_set_level():
    slow = {"name": "slow", "arguments": {"steps": 1, "delay": 0}}
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await initialized(demo)
            await demo.result("tools/call", slow)
            assert demo.notes("notifications/message") == []
            await demo.result("logging/setLevel", {"level": "error"})
            await demo.result("tools/call", slow)
            assert demo.notes("notifications/message") == []
            await demo.result("logging/setLevel", {"level": "info"})
            await demo.result("tools/call", slow)
            logs = [note["params"] for note in demo.notes("notifications/message")]
            assert [log["level"] for log in logs] == ["info", "info"]
        if SCHEMA_PROBLEM is None:
            demo.check("2025-11-25")


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_legacy_ask_sends_an_elicitation_request(version):
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await initialized(demo, version, {"elicitation": {}})
            call = await demo.request("tools/call", {"name": "ask", "arguments": {"question": "Name?"}})
            asked = await demo.read()
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["message"] == "Name?"
            assert ("mode" in asked["params"]) == (version >= "2025-11-25")
            await demo.send(
                {
                    "jsonrpc": "2.0",
                    "id": asked["id"],
                    "result": {"action": "accept", "content": {"name": "Grace"}},
                }
            )
            assert text_of((await demo.answer(call))["result"]) == "Hello, Grace!"

            # The client refuses: the tool says so.
            call = await demo.request("tools/call", {"name": "ask", "arguments": {}})
            asked = await demo.read()
            await demo.send(
                {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "no thanks"}}
            )
            refused = (await demo.answer(call))["result"]
            assert refused["isError"] is True
            assert "no thanks" in text_of(refused)

            # The client cancels the call while the question is open: the
            # server withdraws its question and answers nothing.
            call = await demo.request("tools/call", {"name": "ask", "arguments": {}})
            asked = await demo.read()
            await demo.notify("notifications/cancelled", {"requestId": call})
            withdrawn = await demo.read()
            assert withdrawn["method"] == "notifications/cancelled"
            assert withdrawn["params"]["requestId"] == asked["id"]
            # A late answer to the withdrawn question is ignored.
            await demo.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
            assert (await demo.result("ping")) == {}
            assert await demo.finish() == 0
        assert not any(m.get("id") == call and "method" not in m for m in demo.messages)
        if SCHEMA_PROBLEM is None:
            demo.check(version)


async def test_legacy_ask_without_elicitation_is_a_tool_error():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await initialized(demo, "2025-11-25", {"elicitation": {"url": {}}})
            result = await demo.result("tools/call", {"name": "ask", "arguments": {}})
            assert result["isError"] is True
            assert "elicitation capability" in text_of(result)
        async with raw_demo() as old:
            await initialized(old, "2025-03-26", {"elicitation": {}})
            result = await old.result("tools/call", {"name": "ask", "arguments": {}})
            assert result["isError"] is True
            assert "2025-03-26 has no elicitation" in text_of(result)


async def test_end_of_input_fails_an_open_question():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await initialized(demo, "2025-11-25", {"elicitation": {}})
            call = await demo.request("tools/call", {"name": "ask", "arguments": {}})
            assert (await demo.read())["method"] == "elicitation/create"
            assert await demo.finish() == 0
        (answer,) = [m for m in demo.messages if m.get("id") == call]
        assert answer["result"]["isError"] is True
        assert "closed its input" in text_of(answer["result"])


# ------------------------------------------------------ process behaviour


async def test_in_flight_work_finishes_after_end_of_input():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await demo.send(
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"delay":0.05},'
                b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}\n'
                b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},'
                b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
            )
            # No newline after the last line, and stdin closes right away.
            assert await demo.finish() == 0
        assert sorted(m["id"] for m in demo.messages) == [1, 2]


async def test_sigterm_ends_the_server_cleanly():
    with trio.fail_after(LIMIT):
        async with raw_demo() as demo:
            await demo.result("server/discover", modern_params())
            await demo.request(
                "tools/call",
                modern_params({"name": "slow", "arguments": {"steps": 100, "delay": 5}}, progressToken=1),
            )
            demo.process.send_signal(signal.SIGTERM)
            assert await demo.process.wait() == 0
            while await demo.read() is not None:
                pass
        if SCHEMA_PROBLEM is None:
            demo.check(MODERN)


async def test_stdout_carries_only_json_rpc_and_verbose_explains_on_stderr():
    junk = b'hello\n\n  \r\n[]\n{"jsonrpc":"2.0"}\n{"jsonrpc":"2.0","id":null,"method":"x"}\n\xff\xfe\n'
    with trio.fail_after(LIMIT):
        async with raw_demo() as quiet:
            await quiet.send(junk)
            assert (await quiet.result("server/discover", modern_params()))["supportedVersions"] == [MODERN]
        async with raw_demo("--verbose") as verbose:
            await verbose.send(junk)
            await verbose.result("server/discover", modern_params())
            await verbose.error("tools/call", modern_params({"name": "nope"}))
    assert len(quiet.lines) == 1
    assert len(verbose.lines) == 2
    diagnostics = verbose.stderr.decode()
    assert "dropped an input line that is not JSON" in diagnostics
    assert "2026-07-28" in diagnostics
    assert "unknown tool 'nope'" in diagnostics
    assert "Traceback" not in diagnostics


async def test_command_line_options():
    with trio.fail_after(LIMIT):
        env = {**os.environ, **ENV}
        usage = await trio.run_process([*DEMO, "--help"], capture_stdout=True, env=env)
        assert usage.stdout.startswith(b"usage: python -m trio_mcp.demo")
        version = await trio.run_process([*DEMO, "--version"], capture_stdout=True, env=env)
        assert version.stdout.decode().split() == ["trio-mcp-demo", trio_mcp.__version__]
        bad = await trio.run_process(
            [*DEMO, "--bogus"], capture_stdout=True, capture_stderr=True, check=False, env=env
        )
        assert bad.returncode == 2
        assert bad.stdout == b""
        assert b"unknown option '--bogus'" in bad.stderr
        empty = await trio.run_process(DEMO, stdin=b"", capture_stdout=True, capture_stderr=True, env=env)
        assert (empty.stdout, empty.stderr) == (b"", b"")


async def test_the_module_docstring_examples_run():
    doc = trio_mcp.demo.__doc__
    python = doc.split(".. code-block:: python\n", 1)[1].split("\nOr talk", 1)[0]
    code = "\n".join(line.removeprefix("    ") for line in python.splitlines())
    console = doc.split(".. code-block:: console\n", 1)[1].split("\nRequests are served", 1)[0]
    typed = [line.strip() for line in console.splitlines() if line.strip().startswith("{")]
    with trio.fail_after(LIMIT):
        env = {**os.environ, **ENV}
        ran = await trio.run_process([sys.executable, "-c", code], capture_stdout=True, env=env)
        assert ran.stdout.decode().splitlines() == ["2026-07-28", "{'sum': 5}"]
        session = await trio.run_process(
            DEMO, stdin="\n".join(typed).encode() + b"\n", capture_stdout=True, env=env
        )
    answers = [json.loads(line) for line in session.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_serve_runs_in_process_over_memory_streams(autojump_clock):
    """`trio_mcp.demo.serve` over in-memory streams: ``slow``'s defaults take exactly one (virtual) second."""
    client, server = trio.testing.memory_stream_pair()
    lines: list[bytes] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio_mcp.demo.serve, server, server)
        params = modern_params({"name": "slow"}, progressToken="t")
        await client.send_all(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode() + b"\n"
        )
        start = trio.current_time()
        buffer = b""
        while b'"id":1' not in buffer:
            buffer += await client.receive_some()
        assert trio.current_time() - start == pytest.approx(1.0)
        await client.send_eof()
        lines = buffer.splitlines()
    messages = [json.loads(line) for line in lines]
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3, 4, 5]
    assert text_of(messages[-1]["result"]) == "Done: 5 steps."
    if SCHEMA_PROBLEM is None:
        check_server_lines(lines, MODERN, {("int", 1): "tools/call"})


async def test_an_id_is_free_again_once_its_request_was_cancelled(autojump_clock):
    """A cancelled request answers nothing and leaves nothing behind: its id may be used again."""
    client, server = trio.testing.memory_stream_pair()
    logged: list[str] = []

    def line(request_id: Any, method: str, params: dict) -> bytes:
        return (
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
            + b"\n"
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(trio_mcp.demo.serve, server, server, log=logged.append))
        await client.send_all(
            line(7, "tools/call", modern_params({"name": "slow", "arguments": {"delay": 10}}))
        )
        await trio.sleep(1)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        await client.send_all(json.dumps(cancel).encode() + b"\n")
        await trio.sleep(1)
        await client.send_all(
            line(7, "tools/call", modern_params({"name": "echo", "arguments": {"text": "again"}}))
        )
        buffer = b""
        with trio.fail_after(5):
            while b"\n" not in buffer:
                buffer += await client.receive_some()
        await client.send_eof()
    (answer,) = [json.loads(data) for data in buffer.splitlines()]
    assert answer["id"] == 7
    assert text_of(answer["result"]) == "again"
    assert not any("in progress" in text for text in logged)


def test_the_demo_imports_only_the_light_core():
    """The demo starts on every CLI call: it must not pull in the client, the models or cattrs.

    It imports the pure core, the exceptions and the server core it shares
    with `trio_mcp.testing` (`trio_mcp._serving`), which in turn imports no
    more than that.
    """
    allowed = {
        "trio_mcp._core.framing",
        "trio_mcp._core.jsonrpc",
        "trio_mcp._core.eras",
        "trio_mcp._core.negotiation",
        "trio_mcp._core.cache",
        "trio_mcp._core.kinds",
        "trio_mcp._errors",
        "trio_mcp._trio.parking",
        "trio_mcp._serving.rules",
        "trio_mcp._serving.server",
        "trio_mcp._serving.task_rules",
        "trio_mcp._serving.tasks",
        "trio_mcp._version",
        # The HTTP front (``--http`` only, imported on demand) and the pure HTTP wire rules.
        "trio_mcp._core.codec",
        "trio_mcp._core.http_wire",
        "trio_mcp._serving.http",
        "trio_mcp._serving.http_socket",
    }
    root = Path(trio_mcp.__file__).parent
    for package, own in (
        (root / "demo", ("_features", "_server", "_http")),
        (root / "_serving", ("rules", "server", "http", "task_rules", "tasks")),
    ):
        for path in package.glob("*.py"):
            for node in ast.walk(ast_support.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level:
                    target = "trio_mcp." + (node.module or "")
                    if node.level == 1:
                        assert node.module in (None, *own), (path.name, node.module)
                    else:
                        assert node.level == 2, (path.name, target)
                        assert target in allowed, (path.name, target)
                elif isinstance(node, ast.Import | ast.ImportFrom):
                    names = (
                        [alias.name for alias in node.names]
                        if isinstance(node, ast.Import)
                        else [node.module]
                    )
                    for name in names:
                        assert name.split(".")[0] not in ("cattrs", "attrs", "trio_mcp"), (path.name, name)
    code = "import json, sys, trio_mcp.demo; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    heavy = [
        name
        for name in loaded
        if name.partition(".")[0] == "cattrs"
        or name.startswith(
            ("trio_mcp._client", "trio_mcp._models", "trio_mcp._session", "trio_mcp._transports")
        )
    ]
    assert heavy == []
    # The stdio demo never loads the HTTP stack (``--http`` imports it on demand).
    assert [name for name in loaded if name.partition(".")[0] in ("h11", "httpx2", "httpcore2")] == []
    assert "trio_mcp._serving.http" not in loaded


# --------------------------------------------------------- through the client


class Tap:
    """What one client's session wrote and read: give `on_wire` to the client as its option."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.read: list[bytes] = []

    def on_wire(self, direction: str, line: bytes) -> None:
        (self.written if direction == "out" else self.read).append(line)

    def check(self, revision: str) -> None:
        sent = [json.loads(line) for data in self.written for line in data.splitlines() if line.strip()]
        check_server_lines(self.read, revision, _ids(sent))


def open_demo(**options: Any):
    return process_client(DEMO[0], DEMO[1:], env=ENV, **options)


class Answers:
    """An ``on_elicitation`` hook giving scripted answers, remembering what it was asked."""

    def __init__(self, *answers: dict) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []

    async def __call__(self, params):
        self.asked.append(params)
        await trio.lowlevel.checkpoint()
        return self.answers.pop(0)


async def exercise(client: trio_mcp.Client, answers: Answers) -> list[dict]:
    """Every feature of the demo through the client; returns the notifications the client got."""
    assert [tool.name for tool in await client.list_tools()] == TOOLS
    assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert added.content[0].text == "5"
    assert added.structured_content == {"sum": 5}
    bad = await client.call_tool("add", {"a": "two", "b": 3})
    assert bad.is_error
    assert "'a' must be a number" in bad.content[0].text
    with pytest.raises(RpcError) as unknown:
        await client.call_tool("nope")
    assert unknown.value.code == -32602

    progress: list[tuple] = []
    notes: list[dict] = []
    done = await client.call_tool(
        "slow",
        {"steps": 3, "delay": 0.01},
        on_progress=lambda *args: progress.append(args),
        on_notification=notes.append,
    )
    assert done.content[0].text == "Done: 3 steps."
    assert progress == [(1, 3, "Step 1 of 3"), (2, 3, "Step 2 of 3"), (3, 3, "Step 3 of 3")]

    assert (await client.call_tool("ask", {})).content[0].text == "Hello, Ada!"
    declined = await client.call_tool("ask", {"question": "Who?"})
    assert "declined" in declined.content[0].text
    assert [asked.message for asked in answers.asked] == ["What is your name?", "Who?"]
    assert all(asked.requested_schema["required"] == ["name"] for asked in answers.asked)

    # A call cancelled the Trio way, from its progress callback: the next call is unaffected.
    with trio.CancelScope() as scope:
        await client.call_tool("slow", {"steps": 50, "delay": 0.05}, on_progress=lambda *_: scope.cancel())
    assert scope.cancelled_caught
    assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"

    (resource,) = await client.list_resources()
    assert resource.uri == "demo://readme"
    readme = await client.read_resource("demo://readme")
    assert readme.contents[0].mime_type == "text/markdown"
    (template,) = await client.list_resource_templates()
    assert template.uri_template == "demo://greeting/{name}"
    greeting = await client.read_resource("demo://greeting/Linus")
    assert greeting.contents[0].text == "Hello, Linus!"
    with pytest.raises(RpcError) as missing:
        await client.read_resource("demo://missing")
    assert missing.value.code in (-32002, -32602)

    (prompt,) = await client.list_prompts()
    filled = await client.get_prompt(prompt.name, {"name": "Grace"})
    assert "Grace" in filled.messages[0].content.text
    completion = await client.complete(prompt, ("name", "al"))
    assert completion.values == ["Alan", "Alice"]
    return notes


async def test_client_auto_picks_the_2026_era():
    tap = Tap()
    answers = Answers({"action": "accept", "content": {"name": "Ada"}}, {"action": "decline"})
    everything = Collector()
    with trio.fail_after(LIMIT):
        async with open_demo(
            on_elicitation=answers, log_level="info", on_notification=everything.append, on_wire=tap.on_wire
        ) as client:
            assert client.era == "modern"
            assert client.protocol_version == MODERN
            assert client.server_info.name == "trio-mcp-demo"
            assert "echo" in client.instructions
            assert client.server_capabilities.tools is not None
            notes = await exercise(client, answers)
            await everything.wait_until(lambda got: len(got) >= 2)
    # 2026-07-28: logs are asked for per request, but name none: they reach
    # the client's on_notification, not the call's callback.
    assert notes == []
    assert [note["params"]["data"] for note in everything][:2] == [
        "slow: 3 steps of 0.01 s each",
        "slow: done after 3 steps",
    ]
    if SCHEMA_PROBLEM is None:
        tap.check(MODERN)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_client_pinned_to_the_initialize_era(version):
    tap = Tap()
    answers = Answers({"action": "accept", "content": {"name": "Ada"}}, {"action": "decline"})
    everything: list[dict] = []
    with trio.fail_after(LIMIT):
        async with open_demo(
            protocol=version,
            on_elicitation=answers,
            log_level="info",
            on_notification=everything.append,
            on_wire=tap.on_wire,
        ) as client:
            assert client.era == "legacy"
            assert client.protocol_version == version
            assert client.server_info.name == "trio-mcp-demo"
            await client.ping()
            notes = await exercise(client, answers)
    # Initialize era: logs are session-wide, after logging/setLevel.
    logs = [
        note["params"]["data"] for note in notes + everything if note["method"] == "notifications/message"
    ]
    assert "slow: 3 steps of 0.01 s each" in logs
    assert "ask: asking the user for their name" in logs
    if SCHEMA_PROBLEM is None:
        tap.check(version)


async def test_client_without_an_elicitation_hook():
    with trio.fail_after(LIMIT):
        async with open_demo() as modern:
            with pytest.raises(RpcError) as refused:
                await modern.call_tool("ask")
            assert refused.value.code == -32021
        async with open_demo(protocol="2025-11-25") as legacy:
            result = await legacy.call_tool("ask")
            assert result.is_error
            assert "elicitation capability" in result.content[0].text


async def test_client_answers_cancel_in_both_eras():
    with trio.fail_after(LIMIT):
        for protocol in ("auto", "2025-11-25"):
            async with open_demo(protocol=protocol, on_elicitation=Answers({"action": "cancel"})) as client:
                result = await client.call_tool("ask")
                assert "dismissed" in result.content[0].text


# ------------------------------------------------------------ schema sweep


@needs_schemas
@pytest.mark.parametrize("revision", [MODERN, "2025-11-25", "2025-06-18"])
async def test_the_schema_check_catches_mistakes(revision):
    """The checker above has teeth: a result missing a required field fails it."""
    methods = {("int", 1): "tools/call"}
    good = b'{"jsonrpc":"2.0","id":1,"result":{"content":[]%s}}' % (
        b',"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"trio-mcp-demo","version":"1"}}'
        if revision == MODERN
        else b""
    )
    check_server_lines([good], revision, methods)
    bad = good.replace(b'"content":[]', b'"content":{}')
    with pytest.raises((jsonschema.ValidationError, AssertionError)):
        check_server_lines([bad], revision, methods)
    with pytest.raises(AssertionError):
        check_server_lines([b'{"jsonrpc":"2.0","method":"notifications/nothing"}'], revision, methods)

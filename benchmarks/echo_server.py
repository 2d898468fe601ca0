"""A minimal, fast JSON-RPC echo server over stdio, for the benchmarks.

Every contender talks to this same server. It reads stdin in large chunks,
answers every complete line of a chunk, and writes the answers of the chunk
with one ``write``: under load the answers are batched, and a lone request is
still answered at once (nothing waits for more input).

Raw methods, for the transport benchmarks (any method not listed here is
echoed):

* ``big``: the result is ``{"data": "xxx..."}`` with ``params["size"]`` bytes
  of data; the encoded answer is cached per size, so the server costs little
  beside the copy.
* ``hold``: answers are held back until ``params["n"]`` of them are held, then
  all are written at once (to keep ``n`` requests in flight in the client).
* ``never``: never answered (to keep requests in flight until the client
  gives up on them).
* anything else: the result is the request's params (``{}`` without params).

MCP, for the ``call_tool`` benchmarks: just enough of both protocol eras for
a real client to connect and call one tool. The server is stateless, so it
serves either era on any request:

* ``server/discover`` (modern, 2026-07-28): a ``DiscoverResult`` with the
  ``tools`` capability, the server's identity in ``_meta``.
* ``initialize`` (legacy): an ``InitializeResult`` for the version asked for
  (or the newest legacy one); ``notifications/initialized`` is a notification,
  so it is ignored like every other.
* ``tools/list``: two tools: ``echo``, taking ``{"text": string}``, and
  ``forecast``, taking ``{"city": string}``, with an ``outputSchema`` of the
  usual size (an object of four properties, one of them an array).
* ``tools/call`` of ``echo``: ``{"content": [{"type": "text", "text": <text>}]}``;
  of ``forecast``: a text block and ``structuredContent`` that matches its
  ``outputSchema``.
* ``prompts/list``, ``resources/list``, ``resources/templates/list``: empty
  lists (the server declares no such capability; the official SDK's
  ``ClientSessionGroup`` asks anyway).

A request whose params carry the modern ``_meta`` envelope (a
``io.modelcontextprotocol/protocolVersion`` key) gets modern results, with
``resultType`` (and ``ttlMs``/``cacheScope`` where the schema asks for
them); an unknown version there gets error -32022. ``ping`` is echoed.

Notifications (messages without an id) are read and ignored. Only the
standard library is needed; orjson is used when it is importable.

``--cpu N`` runs the server on CPU N only (``bench.py`` keeps the clients on
another: see its ``pinned``).
"""

from __future__ import annotations

import contextlib
import os

try:
    import orjson

    _loads = orjson.loads
    _OPTION = orjson.OPT_APPEND_NEWLINE

    def _dumps_line(obj: object) -> bytes:
        return orjson.dumps(obj, option=_OPTION)

    def _dumps(obj: object) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - the benchmarks normally have orjson
    import json

    _loads = json.loads

    def _dumps_line(obj: object) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    def _dumps(obj: object) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()


_READ_SIZE = 1 << 20
#: What stdin is read into. ``os.read(0, _READ_SIZE)`` would allocate a
#: buffer of that size on every read, which the C library takes from the
#: heap or maps afresh depending on this process's history (after a large
#: block was freed, it raises its threshold for mapping): a server that had
#: answered ``big`` spent half as much CPU per small request as one that had
#: not, and each contender has its own server.
_BUFFER = bytearray(_READ_SIZE)

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "trio-mcp-bench-echo", "version": "1.0.0"}
ECHO_TOOL = {
    "name": "echo",
    "description": "Answer with the text it is given.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
FORECAST_TOOL = {
    "name": "forecast",
    "description": "A weather forecast, as structured output.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "outputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temperature": {"type": "number"},
            "conditions": {"type": "string", "enum": ["sunny", "cloudy", "rain", "snow"]},
            "readings": {"type": "array", "items": {"type": "integer", "minimum": -100, "maximum": 100}},
        },
        "required": ["city", "temperature", "conditions", "readings"],
        "additionalProperties": False,
    },
}
TOOLS = [ECHO_TOOL, FORECAST_TOOL]


def _result(request_id: object, result: object) -> bytes:
    return _dumps_line({"jsonrpc": "2.0", "id": request_id, "result": result})


def _error(request_id: object, code: int, message: str, data: object = None) -> bytes:
    error: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _dumps_line({"jsonrpc": "2.0", "id": request_id, "error": error})


def _era(params: object) -> str | None:
    """The modern version a request's ``_meta`` envelope names, or None for a legacy request."""
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            version = meta.get(VERSION_KEY)
            if version is not None:
                return str(version)
    return None


def _unsupported(request_id: object, version: str) -> bytes:
    return _error(
        request_id,
        -32022,
        f"unsupported protocol version {version!r}",
        {"supported": [MODERN_VERSION], "requested": version},
    )


def _discover(request_id: object, params: object) -> bytes:
    version = _era(params)
    if version is None:
        return _error(request_id, -32602, "server/discover needs the _meta envelope")
    if version != MODERN_VERSION:
        return _unsupported(request_id, version)
    return _result(
        request_id,
        {
            "resultType": "complete",
            "supportedVersions": [MODERN_VERSION],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        },
    )


def _initialize(request_id: object, params: object) -> bytes:
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    version = asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[-1]
    return _result(
        request_id, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}
    )


def _tools_list(request_id: object, params: object) -> bytes:
    version = _era(params)
    if version is None:
        return _result(request_id, {"tools": TOOLS})
    if version != MODERN_VERSION:
        return _unsupported(request_id, version)
    return _result(request_id, {"tools": TOOLS, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"})


def _forecast(city: str) -> dict[str, object]:
    structured = {"city": city, "temperature": 21.5, "conditions": "sunny", "readings": [18, 19, 21, 24, 22]}
    return {
        "content": [{"type": "text", "text": _dumps(structured).decode()}],
        "structuredContent": structured,
    }


def _tools_call(request_id: object, params: object) -> bytes:
    name = params.get("name") if isinstance(params, dict) else None
    if name not in ("echo", "forecast"):
        return _error(request_id, -32602, f"unknown tool {name!r}")
    assert isinstance(params, dict)
    arguments = params.get("arguments")
    key = "text" if name == "echo" else "city"
    text = arguments.get(key) if isinstance(arguments, dict) else None
    if not isinstance(text, str):
        return _error(request_id, -32602, f"{name} takes one argument, {key}, a string")
    result: dict[str, object] = (
        {"content": [{"type": "text", "text": text}]} if name == "echo" else _forecast(text)
    )
    version = _era(params)
    if version is not None:
        if version != MODERN_VERSION:
            return _unsupported(request_id, version)
        result["resultType"] = "complete"
    return _result(request_id, result)


def _empty(key: str):
    def answer(request_id: object, params: object) -> bytes:
        version = _era(params)
        if version is None:
            return _result(request_id, {key: []})
        if version != MODERN_VERSION:
            return _unsupported(request_id, version)
        return _result(request_id, {key: [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"})

    return answer


MCP_METHODS = {
    "server/discover": _discover,
    "initialize": _initialize,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "prompts/list": _empty("prompts"),
    "resources/list": _empty("resources"),
    "resources/templates/list": _empty("resourceTemplates"),
}


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def main() -> None:
    mcp_methods = MCP_METHODS
    big_tails: dict[int, bytes] = {}
    held: list[bytes] = []
    pending = b""
    while True:
        size = os.readv(0, [_BUFFER])
        data = bytes(memoryview(_BUFFER)[:size])
        if not data:
            break
        if pending:
            data = pending + data
        lines = data.split(b"\n")
        pending = lines.pop()
        out: list[bytes] = []
        for line in lines:
            if not line.strip():
                continue
            msg = _loads(line)
            request_id = msg.get("id")
            if request_id is None:
                continue
            method = msg.get("method")
            params = msg.get("params")
            if method == "big":
                size = int(params["size"])
                tail = big_tails.get(size)
                if tail is None:
                    tail = big_tails[size] = b',"result":{"data":"' + b"x" * size + b'"}}\n'
                out.append(b'{"jsonrpc":"2.0","id":' + _dumps(request_id) + tail)
            elif method == "never":
                continue
            elif method == "hold":
                held.append(_dumps_line({"jsonrpc": "2.0", "id": request_id, "result": params or {}}))
                if len(held) >= int(params["n"]):
                    out.extend(held)
                    held.clear()
            else:
                answer = mcp_methods.get(method)
                if answer is not None:
                    out.append(answer(request_id, params))
                else:
                    out.append(_dumps_line({"jsonrpc": "2.0", "id": request_id, "result": params or {}}))
        if out:
            _write_all(out[0] if len(out) == 1 else b"".join(out))


def _steady_malloc() -> None:
    """Give glibc's allocator fixed thresholds, so that the server's cost per request is the same in every process.

    By default glibc adapts two thresholds to the largest block freed so far:
    above the first, a block is mapped anew (``mmap``); above the second,
    free memory at the top of the heap is handed back (``brk``). A fresh
    server hands back and takes again the memory of each batch of requests
    (a batch of 256 is about 64 KiB, half the first default), which costs it
    system calls and page faults on every batch; a server that once sent a
    10 MiB answer has raised both thresholds past that, and no longer does.
    The same server code then ran a third faster per call in one contender's
    process than in another's, depending on what it had answered before.
    Fixed thresholds (what the adapted ones end up as) make every server the
    fast one from the start. Elsewhere than glibc this does nothing.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (ImportError, OSError, AttributeError):
        return
    mallopt(_M_TRIM_THRESHOLD, 64 * 1024 * 1024)
    mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)


#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _pin(argv: list[str]) -> None:
    """``--cpu N``: run on CPU N only (the benchmark keeps its clients on another)."""
    if len(argv) >= 2 and argv[0] == "--cpu" and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {int(argv[1])})


if __name__ == "__main__":
    import sys

    _pin(sys.argv[1:])
    _steady_malloc()
    # The client may go away first: then leave quietly.
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main()

"""A chaos MCP server over Streamable HTTP, for the soak (``benchmarks/soak.py``) and the pool's tests: loopback only.

    python tests/servers/chaos_server.py [--seed N] [--calm | --only NAME]

It prints ``LISTENING <port>`` and serves ``/mcp`` in both eras (2026-07-28,
stateless; and the initialize era, 2025-11-25, with sessions and a GET
stream), with keep-alive. It knows ``server/discover``, ``initialize``,
``tools/list`` and one tool, ``echo``, whose answer is the ``text`` it was
given. Each ``tools/call`` is answered in one of these ways, drawn at random
(``--calm``: always the first; ``--only NAME``: always that one):

========== ===================================================================
``json``     a plain JSON answer
``sse``      an event stream: a progress notification, then the answer
``dup``      an event stream that sends every event twice (same event id)
``drip``     a JSON answer written a few bytes at a time, with pauses
``cut``      a JSON answer whose connection is cut half-way through its body
``cutsse``   an event stream cut half-way through its answer's event
``5xx``      500, 502 or 504 with a text body
``429``      429 (or 503) with ``Retry-After: 0``
``foreign``  2026-07-28: a JSON answer under the id of another call in flight
``extra``    the answer, then a second, unasked-for response on the same
             connection (a stale answer under the next id, ``"stale"``)
``forget``   initialize era: the session is forgotten (404, "Session not
             found") before the call runs (with ``--only``: once)
``ask``      initialize era: the stream first carries a request of the
             server's (``ping``), and the answer comes once the client has
             answered it (or an error saying it did not, after 10 s)
``resume``   initialize era: a stream with event ids cut before the answer;
             the GET with ``Last-Event-ID`` replays the events already sent,
             then the answer
========== ===================================================================

Event ids of 2026-07-28 streams start at 1 on every stream. The initialize
era's GET stream is closed by the server every few seconds (and carries a
``ping`` of the server's now and then). ``GET /stats`` answers counts: calls,
outcomes drawn, connections open and accepted (the asking one aside), sessions, server requests unanswered.
Nothing is ever sent but to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from typing import Any

import trio

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
INFO = {"name": "chaos", "version": "1"}

#: Outcomes of a tools/call and their weights, per era.
WEIGHTS = {
    "json": 70,
    "sse": 6,
    "dup": 3,
    "drip": 2,
    "cut": 2,
    "cutsse": 1,
    "5xx": 2,
    "429": 2,
    "foreign": 2,
    "extra": 2,
    "forget": 2,
    "ask": 4,
    "resume": 2,
}
MODERN_ONLY = {"foreign"}
LEGACY_ONLY = {"forget", "ask", "resume"}
ASK_WAIT = 10.0


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def json_response(status: int, body: bytes, extra: dict[str, str] | None = None) -> bytes:
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    return head(status, headers | (extra or {})) + body


def event(message: Any | None, event_id: str = "", retry: int | None = None) -> bytes:
    out = b""
    if event_id:
        out += f"id: {event_id}\n".encode()
    if retry is not None:
        out += f"retry: {retry}\n".encode()
    return out + b"data: " + (dumps(message) if message is not None else b"") + b"\n\n"


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


SSE_HEAD = head(
    200, {"content-type": "text/event-stream", "cache-control": "no-cache", "transfer-encoding": "chunked"}
)


class Closed(Exception):
    """The connection is to be closed (a cut, or the client went away)."""


class Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method, self.target, self.headers, self.body = method, target, headers, body


class Conn:
    """One connection: reads requests (Content-Length bodies only: what httpx2 sends), writes raw bytes."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def send(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise Closed from exc

    async def _fill(self) -> None:
        try:
            data = await self.stream.receive_some(65536)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise Closed from exc
        if not data:
            raise Closed
        self.buffer += data

    async def read_request(self) -> Request:
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > 65536:
                raise Closed
            await self._fill()
        top, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = top.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            await self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return Request(method, target, headers, body)


class Session:
    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.events = 0
        #: Streams cut for ``resume``: event id -> (events sent, the rest).
        self.resumable: dict[str, tuple[list[bytes], list[bytes]]] = {}


class Chaos:
    def __init__(self, seed: int, calm: bool, only: str | None = None) -> None:
        self.random = random.Random(seed)
        self.calm = calm
        self.only = only
        self.sessions: dict[str, Session] = {}
        self.minted = 0
        self.in_flight: set[Any] = set()
        self.asked: dict[str, trio.Event] = {}
        self.asks = 0
        self.counts: Counter[str] = Counter()
        self.open = 0
        self.accepted = 0
        #: Connections that came to ask for the stats.
        self.asking = 0

    def draw(self, modern: bool) -> str:
        if self.calm:
            return "json"
        if self.only is not None:
            return self.only if (self.only not in (LEGACY_ONLY if modern else MODERN_ONLY)) else "json"
        names = [
            n for n in WEIGHTS if not (modern and n in LEGACY_ONLY) and not (not modern and n in MODERN_ONLY)
        ]
        return self.random.choices(names, [WEIGHTS[n] for n in names])[0]

    # ------------------------------------------------------------ connections

    async def serve(self, stream: trio.SocketStream) -> None:
        self.open += 1
        self.accepted += 1
        conn = Conn(stream)
        first = True
        try:
            while True:
                request = await conn.read_request()
                if first and request.target == "/stats":
                    self.asking += 1  # not one of the client's connections
                first = False
                if not await self.handle(conn, request):
                    break
        except Closed:
            pass
        finally:
            self.open -= 1
            await trio.aclose_forcefully(stream)

    async def handle(self, conn: Conn, request: Request) -> bool:
        """Answer one request; `False` when the connection is to be closed."""
        if request.target == "/stats":
            await conn.send(json_response(200, dumps(self.stats())))
            return True
        if request.method == "DELETE":
            self.sessions.pop(request.headers.get("mcp-session-id", ""), None)
            await conn.send(json_response(200, b""))
            return True
        if request.method == "GET":
            await self.get_stream(conn, request)
            return False
        message = json.loads(request.body)
        modern = request.headers.get("mcp-protocol-version") == MODERN
        if "method" not in message:  # the client's answer to a request of ours
            self.counts["answers"] += 1
            answered = self.asked.pop(str(message.get("id")), None)
            if answered is not None:
                answered.set()
            await conn.send(head(202, {"content-length": "0"}))
            return True
        method = message["method"]
        request_id = message.get("id")
        session: Session | None = None
        if not modern and method != "initialize":
            session = self.sessions.get(request.headers.get("mcp-session-id", ""))
            if session is None:
                self.counts["unknown session"] += 1
                body = dumps(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
                )
                await conn.send(json_response(404, body))
                return True
        if request_id is None:
            await conn.send(head(202, {"content-length": "0"}))
            return True
        if method == "tools/call":
            self.in_flight.add(request_id)
            try:
                return await self.call(conn, message, modern, session)
            finally:
                self.in_flight.discard(request_id)
        extra: dict[str, str] = {}
        if method == "server/discover":
            if not modern:
                error = {"code": -32022, "message": "unsupported", "data": {"supported": [MODERN]}}
                await conn.send(
                    json_response(400, dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))
                )
                return True
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
            }
        elif method == "initialize":
            self.minted += 1
            sid = f"chaos-{self.minted}-{self.random.getrandbits(32):08x}"
            self.sessions[sid] = Session(sid)
            extra["mcp-session-id"] = sid
            result = {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": INFO}
        elif method == "tools/list":
            result = {"tools": [ECHO]}
        elif method == "ping":
            result = {}
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            await conn.send(json_response(200, dumps({"jsonrpc": "2.0", "id": request_id, "error": error})))
            return True
        if modern:
            result.setdefault("resultType", "complete")
        await conn.send(
            json_response(200, dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), extra)
        )
        return True

    # ------------------------------------------------------------ tools/call

    async def call(self, conn: Conn, message: dict[str, Any], modern: bool, session: Session | None) -> bool:
        request_id = message["id"]
        params = message.get("params") or {}
        text = (params.get("arguments") or {}).get("text")
        how = self.draw(modern)
        self.counts["calls"] += 1
        self.counts[how] += 1
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if modern:
            result["resultType"] = "complete"
        answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
        body = dumps(answer)
        token = (params.get("_meta") or {}).get("progressToken")
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token if token is not None else "none", "progress": 1},
        }
        if how == "json":
            await conn.send(json_response(200, body))
            return True
        if how == "drip":
            whole = json_response(200, body)
            step = max(1, len(whole) // 4)
            for start in range(0, len(whole), step):
                await conn.send(whole[start : start + step])
                await trio.sleep(0.005)
            return True
        if how == "cut":
            whole = json_response(200, body)
            await conn.send(whole[: len(whole) - len(body) // 2])
            return False
        if how == "5xx":
            status = self.random.choice([500, 502, 504])
            text_body = b"chaos: internal trouble"
            await conn.send(
                head(status, {"content-type": "text/plain", "content-length": str(len(text_body))})
                + text_body
            )
            return True
        if how == "429":
            status = self.random.choice([429, 503])
            await conn.send(head(status, {"retry-after": "0", "content-length": "0"}))
            return True
        if how == "foreign":
            others = [other for other in self.in_flight if other != request_id]
            if others:
                body = dumps({**answer, "id": self.random.choice(others)})
            await conn.send(json_response(200, body))
            return True
        if how == "extra":
            next_id = request_id + 1 if isinstance(request_id, int) else request_id
            stale = {
                "jsonrpc": "2.0",
                "id": next_id,
                "result": {"content": [{"type": "text", "text": "stale"}]},
            }
            if modern:
                stale["result"]["resultType"] = "complete"
            await conn.send(json_response(200, body) + json_response(200, dumps(stale)))
            return True
        if how == "forget" and session is not None and not (self.only and self.counts["forget"] > 1):
            self.sessions.pop(session.sid, None)
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
            await conn.send(json_response(404, dumps(error)))
            return True
        # Event streams.
        numbered = modern or session is None
        ids = iter(range(1, 1000)) if numbered else None

        def next_id() -> str:
            if ids is not None:
                return str(next(ids))
            assert session is not None
            session.events += 1
            return f"{session.sid}-{session.events}"

        await conn.send(SSE_HEAD)
        if how == "ask" and session is not None:
            self.asks += 1
            ask_id = f"ask-{self.asks}"
            answered = self.asked[ask_id] = trio.Event()
            await conn.send(chunk(event({"jsonrpc": "2.0", "id": ask_id, "method": "ping"}, next_id())))
            with trio.move_on_after(ASK_WAIT):
                await answered.wait()
            if not answered.is_set():
                self.asked.pop(ask_id, None)
                self.counts["ask unanswered"] += 1
                error = {"code": -32099, "message": f"chaos: the client never answered {ask_id}"}
                answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
            await conn.send(chunk(event(answer, next_id())) + chunk(b""))
            return True
        if how == "resume" and session is not None:
            priming = event(None, next_id(), retry=5)
            note = event(progress, next_id())
            last = f"{session.sid}-{session.events}"
            session.resumable[last] = ([note], [event(answer, next_id())])
            await conn.send(chunk(priming) + chunk(note))
            return False  # cut before the answer
        events = [event(progress, next_id()), event(answer, next_id())]
        if how == "dup":
            events = [e for e in events for _ in range(2)]
        if how == "cutsse":
            data = b"".join(events)
            await conn.send(chunk(data[: len(data) - len(body) // 2]))
            return False
        await conn.send(b"".join(chunk(e) for e in events) + chunk(b""))
        return True

    # ------------------------------------------------------------ GET streams

    async def get_stream(self, conn: Conn, request: Request) -> None:
        session = self.sessions.get(request.headers.get("mcp-session-id", ""))
        if session is None:
            await conn.send(json_response(404, b""))
            return
        last = request.headers.get("last-event-id")
        if last:
            sent, rest = session.resumable.pop(last, ([], []))
            if not rest:
                await conn.send(json_response(404, b""))
                return
            self.counts["resumed"] += 1
            # A replay: what was sent already, then the rest (and the stream stays open a while).
            await conn.send(SSE_HEAD + b"".join(chunk(e) for e in sent + rest))
            await trio.sleep(0.05)
            return
        await conn.send(SSE_HEAD)
        with trio.move_on_after(self.random.uniform(1.0, 4.0)):
            while session.sid in self.sessions:
                await trio.sleep(0.5)
                if self.calm or self.random.random() < 0.7:
                    await conn.send(chunk(b": keep-alive\n\n"))
                    continue
                # A request of the server's on the GET stream; the answer is only counted.
                self.asks += 1
                session.events += 1
                ping = {"jsonrpc": "2.0", "id": f"get-ask-{self.asks}", "method": "ping"}
                await conn.send(chunk(event(ping, f"{session.sid}-{session.events}")))
                self.counts["get asks"] += 1

    def stats(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "open": self.open - 1,  # this request's own connection aside
            "accepted": self.accepted - self.asking,
            "sessions": len(self.sessions),
            "asks pending": len(self.asked),
        }


async def main(config: argparse.Namespace) -> None:
    chaos = Chaos(config.seed, config.calm, config.only)
    listeners = await trio.open_tcp_listeners(config.port, host="127.0.0.1")
    print(f"LISTENING {listeners[0].socket.getsockname()[1]}", flush=True)
    await trio.serve_listeners(chaos.serve, listeners)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--calm", action="store_true", help="answer every call with plain JSON")
    parser.add_argument(
        "--only", choices=sorted(WEIGHTS), help="answer every call this way (to reproduce one)"
    )
    try:
        trio.run(main, parser.parse_args())
    except KeyboardInterrupt:
        sys.exit(0)

"""JSON-RPC over lines, without I/O: encoding, decoding, correlation, routing.

`Connection` is the sans-io heart of the transport, in the manner of h11's
``Connection``. It allocates request ids, keeps the table of requests in
flight, turns each line the server wrote into a list of *events*, and decides
which callback each notification belongs to. It never blocks, never reads a
clock, and never raises on anything the server sends: whatever bytes come in,
`Connection.receive_line` returns events (`Diagnostic` among them for lines it
had to drop).

Each line is decoded by `~trio_mcp._core.codec.decode`, exactly as Python's
`json` module reads it (``NaN``, integers of any size, lone surrogates). A
line that cannot be read at all, because it is too long, nested too deeply,
cut short or not UTF-8, is dropped; when it is the answer to one of our
requests and its ``id`` can be told safely from its first or last bytes, that
request fails at once instead of waiting for its timeout.

Notification routing (the first rule that applies wins):

1. ``params.progressToken`` equal to the ``params._meta.progressToken`` of a
   request in flight: that request.
2. ``params._meta["io.modelcontextprotocol/subscriptionId"]``, or the
   ``params.requestId`` of a ``notifications/cancelled``, naming a request in
   flight: that request.
3. Exactly one request in flight: that request.
4. Otherwise the connection-wide sink.

A rule applies only when the request it picks asked for notifications. A
notification that *names* a request (rules 1 and 2) that is no longer in
flight goes to the sink, never to another request by rule 3.

A server request with the id *and* the method of one of our requests in
flight is that request come back (the other end copies its input, as
``cat`` does): the request fails with a `ProtocolError` saying so, and the
echo is neither served nor answered, since the answer would come back too.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeGuard

import orjson

from .._errors import MCPError, MessageTooLarge, ProtocolError, RpcError
from .codec import NOT_JSON, UnreadableJSON, decode, encode
from .framing import KEEP, Oversized

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "Answered",
    "Connection",
    "Diagnostic",
    "Event",
    "Failed",
    "Note",
    "Send",
    "ServerRequest",
    "ServerRequestCancelled",
    "UnreadableJSON",
    "decode",
    "encode",
    "request_key",
]

JSON: TypeAlias = Any
RequestId: TypeAlias = int | str

SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
CANCELLED: Final = "notifications/cancelled"

#: How many abandoned request ids are remembered, to recognise late answers.
RETIRED_MEMORY: Final = 4096

#: JSON-RPC error codes the transport itself uses.
INVALID_PARAMS: Final = -32602
METHOD_NOT_FOUND: Final = -32601
INTERNAL_ERROR: Final = -32603


# --------------------------------------------------------------------- events
#
# Plain classes with slots rather than attrs classes: one is made for every
# message, on the hot path, and at import time each attrs class costs a
# compilation. Treat them as read-only.


class _Event:
    """Equality and repr by fields, for the events below."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # events may hold dicts

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Answered(_Event):
    """The request ``request_id`` got a result (a JSON object)."""

    __slots__ = ("request_id", "result")

    def __init__(self, request_id: int, result: dict[str, JSON]) -> None:
        self.request_id = request_id
        self.result = result


class Failed(_Event):
    """The request ``request_id`` failed: an error answer, a broken one, or the request echoed back."""

    __slots__ = ("error", "request_id")

    def __init__(self, request_id: int, error: MCPError) -> None:
        self.request_id = request_id
        self.error = error


class Note(_Event):
    """A notification, and the request in flight whose callback takes it.

    ``target`` is `None` when the notification goes to the connection sink.
    """

    __slots__ = ("message", "target")

    def __init__(self, message: dict[str, JSON], target: int | None) -> None:
        self.message = message
        self.target = target


class ServerRequest(_Event):
    """The server asked us something (legacy eras); answer with `Connection.respond`."""

    __slots__ = ("method", "params", "request_id")

    def __init__(self, request_id: RequestId, method: str, params: JSON) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params


class ServerRequestCancelled(_Event):
    """The server withdrew its request ``request_id``: stop work, send no answer."""

    __slots__ = ("request_id",)

    def __init__(self, request_id: RequestId) -> None:
        self.request_id = request_id


class Send(_Event):
    """Bytes the connection wants written (an automatic answer, such as to ``ping``)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Diagnostic(_Event):
    """Something the connection dropped or worked around, for the transport's log.

    ``stray`` is the snippet of a line that is no JSON-RPC message at all (a
    banner, a log line on stdout), else `None`.
    """

    __slots__ = ("stray", "text")

    def __init__(self, text: str, stray: str | None = None) -> None:
        self.text = text
        self.stray = stray


Event: TypeAlias = Answered | Failed | Note | ServerRequest | ServerRequestCancelled | Send | Diagnostic


# ------------------------------------------------------------------ helpers


def _snippet(data: bytes, limit: int = 120) -> str:
    text = repr(data[:limit])
    return text + ("..." if len(data) > limit else "")


def _stray(line: bytes, limit: int = 120) -> str:
    """A line that is no message, as a person reads it (text, quoted, cut at ``limit`` bytes)."""
    text = repr(line[:limit].rstrip(b"\r\n").decode("utf-8", "replace"))
    return text + ("..." if len(line) > limit else "")


def _valid_id(value: object) -> TypeGuard[int | str]:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def request_key(value: RequestId) -> tuple[bool, RequestId]:
    """A dict key for a JSON-RPC id: ``1`` and ``"1"`` are different ids, and stay apart."""
    return (isinstance(value, str), value)


_key = request_key


# Recovering the id of an oversized response from its head or tail.
_ID_VALUE = rb'(-?\d+(?=\s*[,}])|"(?:[^"\\]|\\.){0,200}")'
_HEAD_ID = re.compile(rb'^\s*\{(?:[^{}\[\]]*?,)?\s*"id"\s*:\s*' + _ID_VALUE)
# Only a response (a "result" or "error" member, no "method") may fail one of
# our requests: a server request has ids of its own numbering.
_RESPONSE_HEAD = re.compile(rb'^\s*\{(?:[^{}\[\]]*?,)?\s*"(?:result|error)"\s*:')
_METHOD_MEMBER = re.compile(rb'[{,]\s*"method"\s*:')
_TAIL_ID = re.compile(rb'[,{]\s*"id"\s*:\s*' + _ID_VALUE + rb"\s*\}\s*$")


def _recover_id(head: bytes, tail: bytes) -> RequestId | None:
    """Find the top-level ``id`` of a response that could not be read, if it is near either end.

    ``head`` and ``tail`` are the first and last bytes of the line (they may
    overlap, or both be the whole line). Only an ``id`` member before any
    nested object or array in the head, or the very last member of the
    top-level object in the tail, is trusted: a nested ``"id"`` inside the
    result must never be mistaken for the response's id.
    """
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    shape = _RESPONSE_HEAD.match(head)
    if shape is None or _METHOD_MEMBER.search(shape.group()):
        return None
    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail.rstrip(b"\r"))
    if match is None:
        return None
    try:
        value = decode(match.group(1))
    except UnreadableJSON:
        return None
    return value if _valid_id(value) else None


# --------------------------------------------------------------- connection


#: A request in flight: its method, its progress token (as a `request_key`)
#: and whether it wants the notifications routed to it. A plain tuple, since
#: one is made for every request: building it costs no Python call.
_Pending: TypeAlias = tuple[str, tuple[bool, RequestId] | None, bool]
_METHOD: Final = 0
_TOKEN: Final = 1
_WANTS_NOTES: Final = 2


_dumps = orjson.dumps
_EncodeError = orjson.JSONEncodeError
_LINE: Final = orjson.OPT_APPEND_NEWLINE


class Connection:
    """The client side of one JSON-RPC connection, as a pure state machine.

    The caller writes the bytes the methods return and feeds every line the
    server writes to `receive_line`.
    """

    def __init__(self) -> None:
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}
        self._tokens: dict[tuple[bool, RequestId], int] = {}
        self._retired: OrderedDict[int, str] = OrderedDict()
        self._server_requests: dict[tuple[bool, RequestId], RequestId] = {}
        self.has_sink = False
        """Whether the owner has a connection-wide notification sink."""
        self.answers_ping = True
        """Whether ``ping`` is answered by the connection itself (the
        2026-07-28 era has no ``ping``; turned off, it arrives as a request)."""
        self.serves_requests = True
        """Whether server requests are answered; in the 2026-07-28 era servers
        send none, and one that does is ignored (never answered)."""
        self._warned_version = False

    # ----------------------------------------------------------- outgoing

    @property
    def in_flight(self) -> int:
        """How many of our requests await an answer."""
        return len(self._pending)

    def is_pending(self, request_id: int) -> bool:
        """Whether ``request_id`` still awaits an answer."""
        return request_id in self._pending

    @property
    def next_id(self) -> int:
        """The id the next request will be given."""
        return self._next_id

    def start_request(
        self, method: str, params: dict[str, JSON] | None, wants_notes: bool = False
    ) -> tuple[int, bytes]:
        """Allocate an id for a request and return it with the line to write.

        Args:
            method: The JSON-RPC method name.
            params: The params object, or `None` to send none.
            wants_notes: Whether notifications routed to this request are
                wanted (its owner has a callback for them).

        Raises:
            TypeError: ``method`` is not a string, ``params`` is not a dict,
                or ``params`` cannot be encoded as JSON.
        """
        # The hot path of every request: no Python call but the encoding's
        # fallback, which orjson alone rarely needs.
        if type(method) is not str and not isinstance(method, str):
            raise TypeError(f"method must be a str, not {type(method).__name__}")
        request_id = self._next_id
        message: dict[str, JSON] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        token: tuple[bool, RequestId] | None = None
        if params is not None:
            if type(params) is not dict and not isinstance(params, dict):
                raise TypeError(f"params must be a dict, not {type(params).__name__}")
            message["params"] = params
            meta = params.get("_meta")
            if meta is not None and (type(meta) is dict or isinstance(meta, dict)):
                raw = meta.get("progressToken")
                if raw is not None and _valid_id(raw):
                    token = _key(raw)
                    if token in self._tokens:
                        raise ValueError(f"progress token {raw!r} is already used by a request in flight")
        try:
            data = _dumps(message, option=_LINE)
        except _EncodeError:
            data = encode(message)
        self._next_id = request_id + 1
        self._pending[request_id] = (method, token, wants_notes)
        if token is not None:
            self._tokens[token] = request_id
        return request_id, data

    def abandon(self, request_id: int, reason: str | None = None) -> bytes | None:
        """Stop tracking a request we no longer wait for.

        A late answer for it is then dropped with a diagnostic. Returns the
        ``notifications/cancelled`` line to send, or `None` when the request
        was not in flight (already answered or abandoned).
        """
        pending = self._forget(request_id)
        if pending is None:
            return None
        self._retired[request_id] = pending[_METHOD]
        while len(self._retired) > RETIRED_MEMORY:
            self._retired.popitem(last=False)
        params: dict[str, JSON] = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        return encode({"jsonrpc": "2.0", "method": CANCELLED, "params": params})

    def fail_all(self) -> list[int]:
        """Forget every request in flight and return their ids (the connection is gone)."""
        ids = list(self._pending)
        self._pending.clear()
        self._tokens.clear()
        self._server_requests.clear()
        return ids

    def notification(self, method: str, params: dict[str, JSON] | None = None) -> bytes:
        """Return the line for a notification from us to the server."""
        if not isinstance(method, str):
            raise TypeError(f"method must be a str, not {type(method).__name__}")
        message: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            if not isinstance(params, dict):
                raise TypeError(f"params must be a dict, not {type(params).__name__}")
            message["params"] = params
        return encode(message)

    def forget_server_request(self, request_id: RequestId) -> None:
        """Drop a server request that will get no answer."""
        self._server_requests.pop(_key(request_id), None)

    def respond(self, request_id: RequestId, result: dict[str, JSON]) -> bytes | None:
        """Return the answer to a server request, or `None` if it was withdrawn."""
        if self._server_requests.pop(_key(request_id), None) is None:
            return None
        try:
            return encode({"jsonrpc": "2.0", "id": request_id, "result": result})
        except TypeError as exc:
            return self._error_line(request_id, INTERNAL_ERROR, f"unencodable result: {exc}", None)

    def respond_error(
        self, request_id: RequestId, code: int, message: str, data: JSON = None
    ) -> bytes | None:
        """Return an error answer to a server request, or `None` if it was withdrawn."""
        if self._server_requests.pop(_key(request_id), None) is None:
            return None
        return self._error_line(request_id, code, message, data)

    def _error_line(self, request_id: RequestId, code: int, message: str, data: JSON) -> bytes:
        error: dict[str, JSON] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        try:
            return encode({"jsonrpc": "2.0", "id": request_id, "error": error})
        except TypeError:
            del error["data"]
            return encode({"jsonrpc": "2.0", "id": request_id, "error": error})

    # ----------------------------------------------------------- incoming

    def receive_line(self, line: bytes | Oversized) -> list[Event]:
        """Decode one line from the server and return what it means.

        Never raises: a line that is not JSON-RPC becomes a `Diagnostic`. An
        answer that cannot be read fails its request (with `MessageTooLarge`
        for an `Oversized` line, `ProtocolError` otherwise) if its ``id`` can
        be recovered. ``line`` should already be cleaned (`clean_line`) and
        non-empty.
        """
        events = self.receive(line)
        if isinstance(events, tuple):
            return [Answered(*events)]
        return events

    def receive(self, line: bytes | Oversized) -> tuple[int, dict[str, JSON]] | list[Event]:
        """`receive_line`, with the common case in short: a plain result
        for a request in flight is returned as ``(request_id, result)``, the
        fields of its `Answered`, without building the event and its list.
        """
        if type(line) is not bytes and isinstance(line, Oversized):
            return self._receive_oversized(line)
        try:
            decoded = decode(line)
        except UnreadableJSON as exc:
            return self._receive_unreadable(line, exc)
        if type(decoded) is dict:
            # The common case first: a plain result for a request in flight.
            # Anything else takes the general path below, which treats this
            # case identically (only slower).
            request_id = decoded.get("id")
            result = decoded.get("result")
            if (
                type(request_id) is int
                and type(result) is dict
                and "error" not in decoded
                and "method" not in decoded
                and decoded.get("jsonrpc") == "2.0"
            ):
                pending = self._pending.pop(request_id, None)
                if pending is not None:
                    if pending[_TOKEN] is not None:
                        self._tokens.pop(pending[_TOKEN], None)
                    return (request_id, result)
        events: list[Event] = []
        if isinstance(decoded, list):
            if not decoded:
                return [Diagnostic("dropped an empty JSON-RPC batch")]
            for item in decoded:
                self._receive_message(item, line, events)
        else:
            self._receive_message(decoded, line, events)
        return events

    def _receive_oversized(self, record: Oversized) -> list[Event]:
        events: list[Event] = []
        local = self._fail_recovered(
            _recover_id(record.head, record.tail),
            lambda local: MessageTooLarge(
                f"the answer to request {local} was {record.size} bytes, "
                f"over the limit of {record.limit} bytes (max_message_bytes); "
                "it was discarded",
                size=record.size,
                limit=record.limit,
            ),
            events,
        )
        where = "" if local is None else f" (answer to request {local}, which fails)"
        events.append(
            Diagnostic(
                f"discarded a stdout line of {record.size} bytes, over the size limit{where}: {_snippet(record.head, 80)}"
            )
        )
        return events

    def _receive_unreadable(self, line: bytes, exc: UnreadableJSON) -> list[Event]:
        what = exc.reason
        if exc.reason == NOT_JSON and line.startswith(b"Content-Length:"):
            what += " (Content-Length framing? MCP stdio is one JSON message per line)"
        elif exc.detail and (exc.reason != NOT_JSON or line.startswith((b"{", b"["))):
            # Where a line that looks like JSON breaks; a banner needs no such detail.
            what += f" ({exc.detail})"
        events: list[Event] = []
        local = self._fail_recovered(
            _recover_id(line[:KEEP], line[-KEEP:]),
            lambda local: ProtocolError(f"the answer to request {local} could not be read: it is {what}"),
            events,
        )
        where = "" if local is None else f" (answer to request {local}, which fails)"
        events.append(
            Diagnostic(f"dropped a stdout line that is {what}{where}: {_snippet(line)}", _stray(line))
        )
        return events

    def _fail_recovered(
        self, request_id: RequestId | None, error: Callable[[int], MCPError], events: list[Event]
    ) -> int | None:
        """Fail our request ``request_id`` (recovered from a discarded answer) with ``error(local id)``."""
        if request_id is None:
            return None
        local = self._match(request_id, events)
        if local is None:
            return None
        self._forget(local)
        events.append(Failed(local, error(local)))
        return local

    def _receive_message(self, msg: object, line: bytes, events: list[Event]) -> None:
        if not isinstance(msg, dict):
            events.append(
                Diagnostic(
                    f"dropped a stdout line that is JSON but not a JSON-RPC message: {_snippet(line)}",
                    _stray(line),
                )
            )
            return
        if msg.get("jsonrpc") != "2.0" and not self._warned_version:
            self._warned_version = True
            events.append(Diagnostic(f"server sends 'jsonrpc': {msg.get('jsonrpc')!r}, not '2.0'; accepted"))
        method = msg.get("method")
        if method is not None:
            if not isinstance(method, str):
                events.append(Diagnostic(f"dropped a message whose method is not a string: {_snippet(line)}"))
                return
            params = msg.get("params")
            if "id" in msg:
                self._receive_server_request(msg["id"], method, params, line, events)
            elif params is None or isinstance(params, dict):
                self._receive_notification(msg, method, params, events)
            else:
                events.append(
                    Diagnostic(f"dropped a notification whose params are not an object: {_snippet(line)}")
                )
            return
        if "result" in msg or "error" in msg or "id" in msg:
            self._receive_response(msg, line, events)
            return
        events.append(
            Diagnostic(
                f"dropped a stdout line that is JSON but not a JSON-RPC message: {_snippet(line)}",
                _stray(line),
            )
        )

    def _receive_server_request(
        self, raw_id: object, method: str, params: object, line: bytes, events: list[Event]
    ) -> None:
        if not _valid_id(raw_id):
            events.append(Diagnostic(f"dropped a server request with an invalid id: {_snippet(line)}"))
            return
        assert isinstance(raw_id, int | str)
        pending = self._pending.get(raw_id) if isinstance(raw_id, int) else None
        if isinstance(raw_id, int) and pending is not None and pending[_METHOD] == method:
            # Our own request, come back: the other end copies its input to
            # its output. Answering it would only be echoed in turn.
            self._forget(raw_id)
            events.append(
                Failed(
                    raw_id,
                    ProtocolError(
                        f"the server echoed request {raw_id} ({method}) back instead of answering it;"
                        " it is probably not an MCP server (a program that copies its input, such as cat)"
                    ),
                )
            )
            events.append(
                Diagnostic(f"the server sent our request {raw_id} ({method}) back: {_snippet(line)}")
            )
            return
        if not self.serves_requests:
            events.append(
                Diagnostic(f"ignored a server request (servers send none in this era): {_snippet(line)}")
            )
            return
        if method == "ping" and self.answers_ping:
            events.append(Send(encode({"jsonrpc": "2.0", "id": raw_id, "result": {}})))
            return
        if params is not None and not isinstance(params, dict | list):
            events.append(
                Send(self._error_line(raw_id, -32602, "params must be an object or an array", None))
            )
            events.append(Diagnostic(f"refused server request {method!r}: params are not an object"))
            return
        if _key(raw_id) in self._server_requests:
            # Ids must be unique among requests in flight: answering this one
            # would answer (or fail) the first. Drop it; the first stands.
            events.append(
                Diagnostic(
                    f"dropped a server request {method!r} reusing the id {raw_id!r} of one still in flight"
                )
            )
            return
        self._server_requests[_key(raw_id)] = raw_id
        events.append(ServerRequest(raw_id, method, params))

    def _receive_notification(
        self, msg: dict[str, JSON], method: str, params: dict[str, JSON] | None, events: list[Event]
    ) -> None:
        if method == CANCELLED and params is not None:
            named = params.get("requestId")
            if _valid_id(named) and self._server_requests.pop(_key(named), None) is not None:
                events.append(ServerRequestCancelled(named))
                events.append(Note(msg, None))
                return
        events.append(Note(msg, self._route(method, params, events)))

    def _route(self, method: str, params: dict[str, JSON] | None, events: list[Event]) -> int | None:
        named = False
        if params is not None:
            token = params.get("progressToken")
            if _valid_id(token):
                named = True
                found = self._tokens.get(_key(token))
                if found is not None:
                    return found if self._pending[found][_WANTS_NOTES] else None
            meta = params.get("_meta")
            candidates: list[object] = []
            if isinstance(meta, dict) and SUBSCRIPTION_ID in meta:
                candidates.append(meta[SUBSCRIPTION_ID])
            if method == CANCELLED:
                candidates.append(params.get("requestId"))
            for raw in candidates:
                if not _valid_id(raw):
                    continue
                named = True
                assert isinstance(raw, int | str)
                local = self._match(raw, events, quiet=True)
                if local is not None:
                    return local if self._pending[local][_WANTS_NOTES] else None
        if not named and len(self._pending) == 1:
            ((only, pending),) = self._pending.items()
            return only if pending[_WANTS_NOTES] else None
        return None

    def _receive_response(self, msg: dict[str, JSON], line: bytes, events: list[Event]) -> None:
        raw_id = msg.get("id")
        has_result = "result" in msg
        has_error = "error" in msg
        if raw_id is None:
            error = msg.get("error")
            text = ""
            if isinstance(error, dict):
                text = f" {error.get('code')!r}: {error.get('message')!r}"
            events.append(
                Diagnostic(
                    f"dropped an error response without an id (the server could not read a message?){text}"
                )
            )
            return
        if not _valid_id(raw_id):
            events.append(Diagnostic(f"dropped a response with an invalid id: {_snippet(line)}"))
            return
        assert isinstance(raw_id, int | str)
        local = self._match(raw_id, events)
        if local is None:
            return
        self._forget(local)
        if has_result and has_error:
            events.append(
                Failed(local, ProtocolError(f"the answer to request {local} has both 'result' and 'error'"))
            )
        elif has_result:
            result = msg["result"]
            if isinstance(result, dict):
                events.append(Answered(local, result))
            else:
                events.append(
                    Failed(
                        local,
                        ProtocolError(
                            f"the result for request {local} is a {type(result).__name__}, not an object"
                        ),
                    )
                )
        elif has_error:
            events.append(Failed(local, _rpc_error(local, msg["error"])))
        else:
            events.append(
                Failed(
                    local, ProtocolError(f"the answer to request {local} has neither 'result' nor 'error'")
                )
            )

    def _match(self, raw_id: RequestId, events: list[Event], *, quiet: bool = False) -> int | None:
        """Map an id the server sent to one of our requests in flight."""
        if isinstance(raw_id, int):
            if raw_id in self._pending:
                return raw_id
        elif raw_id.isascii() and raw_id.isdigit() and len(raw_id) < 20:
            local = int(raw_id)
            if local in self._pending and raw_id == str(local):
                if not quiet:
                    events.append(
                        Diagnostic(
                            f"server answered request {local} with the id as a string {raw_id!r}; accepted"
                        )
                    )
                return local
        if quiet:
            return None
        if isinstance(raw_id, int) and raw_id in self._retired:
            events.append(
                Diagnostic(f"dropped a late answer to abandoned request {raw_id} ({self._retired[raw_id]})")
            )
        else:
            events.append(Diagnostic(f"dropped a response for unknown request id {raw_id!r}"))
        return None

    def _forget(self, request_id: int) -> _Pending | None:
        pending = self._pending.pop(request_id, None)
        if pending is not None and pending[_TOKEN] is not None:
            self._tokens.pop(pending[_TOKEN], None)
        return pending


def _rpc_error(local: int, error: object) -> MCPError:
    if not isinstance(error, dict):
        return ProtocolError(f"the error for request {local} is a {type(error).__name__}, not an object")
    code = error.get("code")
    message = error.get("message")
    if not isinstance(code, int) or isinstance(code, bool):
        return ProtocolError(f"the error for request {local} has a non-integer code {code!r}: {message!r}")
    if not isinstance(message, str):
        return ProtocolError(f"the error for request {local} (code {code}) has no message")
    return RpcError(code, message, error.get("data"))

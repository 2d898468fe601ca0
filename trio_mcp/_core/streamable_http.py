"""Streamable HTTP, both eras, without I/O: responses and events in, decisions out.

`StreamableHTTP` is the state of one client's Streamable HTTP connection to
one MCP endpoint, in the manner of h11's ``Connection``: the I/O loop (the
HTTP channel, over httpx2) tells it what it sent and what came back, and it
answers with what to do. It never blocks, reads no clock, does no I/O and
never raises on anything a server sends.

Our requests are `Call` objects. A call goes out on one *exchange* at a time
(a POST, or a GET resuming its stream); every exchange has a number, and
what comes back is fed with it, so that nothing read on an exchange that is
over can ever complete a call. The core owns:

* the HTTP session of the initialize era (``Mcp-Session-Id``, taken only
  from a successful ``initialize``), the negotiated revision, and the
  protocol headers of every request (built from what the session knows of
  the message: method, name, revision; never from its JSON);
* correlation: a response completes only the call whose exchange carried
  it, and only once. A JSON body (one answer per POST) under an id that is
  no call's (``null``, ``"server-error"``) is that call's answer; under the
  id of another call, in flight or finished, it is nobody's;
* replay detection: event ids per stream (the 2026-07-28 era has no
  resumption: its event ids are not tracked at all), and server requests by
  JSON-RPC id, so that none is handed over (and answered) twice;
* resumption of a cut stream of the initialize era with ``Last-Event-ID``,
  bounded, and the GET stream's reopening (reset by any event it carried);
* session renewal: a lost session (404, or a 400 that says so in one of the
  forms servers use, with a session sent) is renewed once however many
  calls found it lost, at most one renewal in flight; each call is sent
  again at most once;
* the reading of refusals: typed errors (`AuthRequired`, `ServerBusy`,
  `HTTPError`, `SessionExpired`) or the JSON-RPC error the body carries.

Memory is bounded whatever the server sends: the ids remembered (finished
calls, served requests, event ids) are kept in bounded LRU tables.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from .._errors import (
    ConnectionFailed,
    HTTPError,
    MCPError,
    MessageTooLarge,
    ProtocolError,
    SessionExpired,
)
from .codec import UnreadableJSON, decode, encode
from .eras import UNSUPPORTED_PROTOCOL_VERSION
from .http_actions import Action, Deliver, Fail, Log, remember, retry_delay
from .http_wire import (
    header_value,
    lost_session,
    media_type,
    rpc_error_body,
    typed_refusal,
    valid_session_id,
)
from .sse import BadEncoding, Event, EventTooLarge, Item

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping

__all__ = [
    "ACCEPT",
    "READ_GET",
    "SEND",
    "SEND_SSE",
    "Action",
    "AwaitGate",
    "AwaitRenewal",
    "Call",
    "Deliver",
    "Fail",
    "GetEnded",
    "GetEvent",
    "GetFailed",
    "GetHead",
    "GetRefused",
    "GetRequest",
    "GetStep",
    "HandshakeStep",
    "Log",
    "Next",
    "OpenGet",
    "PostCall",
    "PostMessage",
    "Read",
    "ReadGet",
    "RenewalStep",
    "Resume",
    "Send",
    "SendSse",
    "Sleep",
    "StreamableHTTP",
]

JSON: TypeAlias = Any

ACCEPT: Final = "application/json, text/event-stream"
#: How many times a cut stream is resumed with ``Last-Event-ID``.
MAX_RESUMES: Final = 5
#: How many times in a row the GET stream may fail before it is given up.
MAX_GET_FAILURES: Final = 5
#: How many ids each table of remembered ids holds.
MEMORY: Final = 4096
#: How many event ids one call's stream remembers.
CALL_EVENTS: Final = 1024
#: How much of an error body is kept in an error.
ERROR_BODY_KEEP: Final = 1024
#: Methods whose ``Mcp-Name`` header is the name, URI or task id the session gave.
_NAMED: Final = frozenset(
    {"tools/call", "prompts/get", "resources/read", "tasks/get", "tasks/update", "tasks/cancel"}
)
#: Methods without side effects: sent again once when no response came at all.
_SAFE: Final = frozenset(
    {
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)
#: What a renewed session is told again, by method.
_SESSION_STATE: Final = frozenset({"logging/setLevel", "resources/subscribe"})


class Read(enum.Enum):
    """What to read of a response to a POST (`StreamableHTTP.response`)."""

    JSON = enum.auto()
    """A JSON body: read it whole and give it to `StreamableHTTP.json_body`."""
    EVENTS = enum.auto()
    """An event stream: give its items to `StreamableHTTP.event` until the call is answered."""
    REFUSAL = enum.auto()
    """No answer in itself: read the start of its body and give it to `StreamableHTTP.refusal`."""
    PARKED = enum.auto()
    """A 202 while the GET stream is open: the answer may come there; wait for it."""


class Next(enum.Enum):
    """What a call does next, after a refusal (`StreamableHTTP.refusal`) or a lost session
    (`StreamableHTTP.lost`)."""

    LOST = enum.auto()
    """The session is lost: ask `StreamableHTTP.lost` what to do."""
    RESEND = enum.auto()
    """Send the call again (a new exchange), now."""
    RENEW = enum.auto()
    """Open a new session (`StreamableHTTP.renewal`), then ask `StreamableHTTP.lost` again."""
    WAIT = enum.auto()
    """A renewal is in flight: wait for it to end, then ask `StreamableHTTP.lost` again."""
    FALL_BACK = enum.auto()
    """``initialize`` was refused without an MCP body: try the HTTP+SSE transport of 2024-11-05."""


class GetRefused:
    """The GET stream's response is no stream: ``final``, it is given up for good; else it is
    opened again after a delay (`StreamableHTTP.get_ended`)."""

    __slots__ = ("final", "reason")

    def __init__(self, reason: str, *, final: bool) -> None:
        self.reason = reason
        self.final = final

    def __repr__(self) -> str:
        return f"GetRefused({self.reason!r}, final={self.final})"


class Send:
    """POST the call now, on a new exchange (`StreamableHTTP.post_headers`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Send()"


#: The one `Send`.
SEND: Final = Send()


class SendSse:
    """Send the call over the HTTP+SSE link of 2024-11-05: the server turned out to speak it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SendSse()"


#: The one `SendSse`.
SEND_SSE: Final = SendSse()


class AwaitGate:
    """Wait until ``notifications/initialized`` is through and the GET stream opened (or
    refused), then ask `StreamableHTTP.next_step` again with ``then``: what the server sends on
    that stream at once is not lost to a request sent before it."""

    __slots__ = ("then",)

    def __init__(self, then: Next | None = None) -> None:
        self.then = then

    def __repr__(self) -> str:
        return f"AwaitGate(then={self.then})"


class AwaitRenewal:
    """Wait until the session's renewal is over (``start``: start it first, in a task of its own:
    `StreamableHTTP.renewal`), then give ``then`` to `StreamableHTTP.next_step`."""

    __slots__ = ("start", "then")

    def __init__(self, then: Next | None, *, start: bool = False) -> None:
        self.then = then
        self.start = start

    def __repr__(self) -> str:
        return f"AwaitRenewal(then={self.then}, start={self.start})"


class Resume:
    """Resume a cut stream: wait ``delay`` seconds, then GET with ``headers`` (``Last-Event-ID``)."""

    __slots__ = ("delay", "headers")

    def __init__(self, headers: dict[str, str], delay: float) -> None:
        self.headers = headers
        self.delay = delay

    def __repr__(self) -> str:
        return f"Resume({self.headers!r}, delay={self.delay})"


class PostCall:
    """POST a request of the core's own (`Call.private`) and read its answer into the call; send
    back the error that kept it from being answered, or `None`."""

    __slots__ = ("call",)

    def __init__(self, call: Call) -> None:
        self.call = call

    def __repr__(self) -> str:
        return f"PostCall({self.call!r})"


class PostMessage:
    """POST a notification of the session's (``notifications/initialized``); nothing comes back."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"PostMessage({self.data[:60]!r})"


class OpenGet:
    """Start the stream of server messages (`StreamableHTTP.get_stream`) in a task of its own;
    ``wait``: wait until its first response came (or failed) before the next step."""

    __slots__ = ("wait",)

    def __init__(self, *, wait: bool = False) -> None:
        self.wait = wait

    def __repr__(self) -> str:
        return f"OpenGet(wait={self.wait})"


class GetRequest:
    """Send the GET of the stream of server messages with ``headers``; send back its `GetHead`,
    or `GetFailed` when no response came."""

    __slots__ = ("headers",)

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    def __repr__(self) -> str:
        return f"GetRequest({self.headers!r})"


class ReadGet:
    """Read the GET stream, each item to `StreamableHTTP.get_event`, until it ends; send back
    `GetEnded`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ReadGet()"


#: The one `ReadGet`.
READ_GET: Final = ReadGet()


class Sleep:
    """Wait ``delay`` seconds, then carry on (the clock is the loop's)."""

    __slots__ = ("delay",)

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def __repr__(self) -> str:
        return f"Sleep({self.delay})"


class GetHead:
    """The head of the GET stream's response."""

    __slots__ = ("content_type", "status")

    def __init__(self, status: int, content_type: str | None) -> None:
        self.status = status
        self.content_type = content_type

    def __repr__(self) -> str:
        return f"GetHead({self.status}, {self.content_type!r})"


class GetFailed:
    """The GET got no response (or its request failed): ``why``."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"GetFailed({self.why!r})"


class GetEnded:
    """The GET stream ended: ``why`` is the network error that broke it, `None` for a clean end;
    ``last_event_id`` and ``retry`` (milliseconds): where its parser stood (a priming event sets
    them and delivers nothing), for reopening it."""

    __slots__ = ("last_event_id", "retry", "why")

    def __init__(self, why: str | None, last_event_id: str = "", retry: int | None = None) -> None:
        self.why = why
        self.last_event_id = last_event_id
        self.retry = retry

    def __repr__(self) -> str:
        return f"GetEnded({self.why!r}, {self.last_event_id!r}, {self.retry})"


#: What a renewal asks of the loop, in order (`StreamableHTTP.renew`).
RenewalStep: TypeAlias = "Log | PostCall | PostMessage | OpenGet"
#: What the handshake's end asks of the loop (`StreamableHTTP.handshake`).
HandshakeStep: TypeAlias = "PostMessage | OpenGet"
#: What the GET stream asks of the loop (`StreamableHTTP.get_stream`).
GetStep: TypeAlias = "GetRequest | ReadGet | Sleep | Log"
#: What the loop tells the GET stream (`StreamableHTTP.get_stream`).
GetEvent: TypeAlias = "GetHead | GetFailed | GetEnded"


# The verdicts by their former names.
READ_JSON: Final = Read.JSON
READ_EVENTS: Final = Read.EVENTS
READ_REFUSAL: Final = Read.REFUSAL
PARKED: Final = Read.PARKED
RENEW: Final = Next.RENEW
WAIT: Final = Next.WAIT
RESEND: Final = Next.RESEND
LOST: Final = Next.LOST
FALL_BACK: Final = Next.FALL_BACK


def _is_int(value: object) -> bool:
    return type(value) is int


def _key(value: object) -> tuple[bool, object] | None:
    if isinstance(value, str):
        return (True, value)
    if _is_int(value):
        return (False, value)
    return None


class Call:
    """One request of ours, across the exchanges that carry it (read-only outside the core).

    Attributes:
        request_id: Its JSON-RPC id (ours; a string for the core's own requests).
        method: Its method.
        revision: Its 2026-07-28 revision, or `None` in the initialize era.
        exchange: The number of the exchange now carrying it (0: none yet).
        answered: Whether its answer arrived.
        answer: The core's own requests only: the answer, once it came.
    """

    __slots__ = (
        "answer",
        "answered",
        "data",
        "exchange",
        "generation",
        "headers",
        "last_event_id",
        "lost",
        "method",
        "name",
        "offered_session",
        "parked",
        "private",
        "request_id",
        "resent",
        "resent_unread",
        "resumes",
        "retry",
        "revision",
        "seen",
        "session_sent",
    )

    def __init__(
        self, request_id: int | str, method: str, name: str | None, revision: str | None, private: bool
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.name = name
        self.revision = revision
        self.private = private
        self.data = b""
        self.headers: tuple[tuple[str, str], ...] = ()
        self.exchange = 0
        self.generation = 0
        self.session_sent = False
        self.resent = False
        self.resent_unread = False
        self.answered = False
        self.answer: dict[str, JSON] | None = None
        self.parked = False
        self.offered_session: str | None = None
        self.last_event_id = ""
        self.lost: tuple[int, str] = (0, "")
        self.retry: int | None = None
        self.resumes = 0
        self.seen: OrderedDict[str, None] = OrderedDict()

    def __repr__(self) -> str:
        return f"Call({self.request_id!r}, {self.method!r}, exchange={self.exchange})"


class StreamableHTTP:
    """The sans-io state of a Streamable HTTP connection (see the module's documentation).

    Args:
        name: Who the server is, for messages (``server 'http://host/mcp'``).
        url: The endpoint as messages show it (no secrets).
    """

    def __init__(self, name: str, url: str) -> None:
        self.name = name
        self.url = url
        self.session_id: str | None = None
        """The HTTP session of the initialize era, or `None`."""
        self.version: str | None = None
        """The revision ``initialize`` settled on, or `None`."""
        self.generation = 0
        """Bumped each time a session starts: a call sent under an older one may be resent."""
        self.renewing = False
        """Whether a session renewal is in flight (at most one)."""
        self.renewals = 0
        """How many renewals were started."""
        self.get_open = False
        """Whether the GET stream is open (its response head was a stream)."""
        self.fell_back = False
        """Whether the server turned out to speak HTTP+SSE (2024-11-05): calls go over that link."""
        self._gates = 0
        self._get_started = False
        self._get_running = False
        self._renewal_failure: tuple[int, MCPError] | None = None
        self._calls: dict[int | str, Call] = {}
        self._finished: OrderedDict[tuple[bool, object], None] = OrderedDict()
        self._served: OrderedDict[tuple[bool, object], None] = OrderedDict()
        self._get_seen: OrderedDict[str, None] = OrderedDict()
        self._get_failures = 0
        self._get_carried = 0
        self._get_last_id = ""
        self._get_retry: int | None = None
        self._private_ids = 0
        self._initialize: bytes | None = None
        self._renewal: Call | None = None
        self.initialized: bytes | None = None
        """``notifications/initialized`` as the session sent it (sent again to a new session)."""
        self._state: dict[tuple[str, str], bytes] = {}

    # ------------------------------------------------------------ calls

    @property
    def in_flight(self) -> int:
        """How many calls are open."""
        return len(self._calls)

    def open(
        self,
        data: bytes,
        method: str,
        request_id: int,
        name: str | None = None,
        revision: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Call:
        """Start tracking our request ``request_id`` (its bytes are ``data``; ``headers``: extra
        headers of its POSTs, 2026-07-28 era: the ``Mcp-Param-*`` of x-mcp-header)."""
        call = Call(request_id, method, name, revision, private=False)
        call.data = data
        call.headers = headers
        self._calls[request_id] = call
        if revision is None:
            if method == "initialize":
                self._initialize = data
            elif method in _SESSION_STATE:
                self._state[(method, name or "")] = data
            elif method == "resources/unsubscribe":
                self._state.pop(("resources/subscribe", name or ""), None)
        return call

    def private(self, data: bytes) -> Call:
        """A request of the core's own (``data`` with an id the session never uses), for a renewal."""
        self._private_ids += 1
        message = decode(data)
        message["id"] = f"trio-mcp-{self._private_ids}"
        call = Call(message["id"], str(message.get("method")), None, None, private=True)
        call.data = encode(message)
        self._calls[call.request_id] = call
        return call

    def finish(self, call: Call) -> None:
        """The call is over (answered, failed, withdrawn): forget it, remember its id."""
        if self._calls.get(call.request_id) is call:
            del self._calls[call.request_id]
            key = _key(call.request_id)
            if key is not None:
                remember(self._finished, key, MEMORY)

    def find(self, request_id: int | str) -> Call | None:
        """The open call of ``request_id``, if any."""
        return self._calls.get(request_id)

    def is_open(self, call: Call) -> bool:
        """Whether the call is still tracked."""
        return self._calls.get(call.request_id) is call

    # ------------------------------------------------------------ headers

    def post_headers(self, call: Call) -> dict[str, str]:
        """Start a new exchange for ``call`` (a POST) and return its protocol headers."""
        call.exchange += 1
        call.parked = False
        call.generation = self.generation
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if call.revision is not None:
            headers["mcp-protocol-version"] = call.revision
            headers["mcp-method"] = header_value(call.method)
            if call.name is not None and call.method in _NAMED:
                headers["mcp-name"] = header_value(call.name)
            headers.update(call.headers)
            call.session_sent = False
        elif call.method != "initialize":
            headers.update(self.session_headers())
            call.session_sent = self.session_id is not None
        return headers

    def session_headers(self) -> dict[str, str]:
        """The initialize era's headers: session id and negotiated revision, when known."""
        headers: dict[str, str] = {}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.version is not None:
            headers["mcp-protocol-version"] = self.version
        return headers

    def message_headers(self, method: str | None, revision: str | None) -> dict[str, str]:
        """The protocol headers of a notification or of an answer to a server request."""
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if revision is not None:
            headers["mcp-protocol-version"] = revision
            if method is not None:
                headers["mcp-method"] = header_value(method)
        else:
            headers.update(self.session_headers())
        return headers

    def stream_headers(self, last_event_id: str = "") -> dict[str, str]:
        """The headers of a GET (the server's stream, or a resumption)."""
        headers = {"accept": "text/event-stream", **self.session_headers()}
        if last_event_id:
            headers["last-event-id"] = last_event_id
        return headers

    def delete_headers(self) -> dict[str, str] | None:
        """On closing: the headers of the ``DELETE`` that ends the HTTP session, or `None` when
        there is none to end (the 2026-07-28 era, or a server that spoke HTTP+SSE)."""
        if self.session_id is None or self.fell_back:
            return None
        return self.stream_headers()

    # ------------------------------------------------------------ responses

    def response(self, call: Call, exchange: int, status: int, headers: Mapping[str, str]) -> Read | Fail:
        """The head of a response to ``call``'s POST: what to read of it, or why the call fails.

        ``headers`` has lower-case names.
        """
        if exchange != call.exchange:
            return Fail(ProtocolError(f"a response to {call.method} on an exchange that is over"))
        kind = media_type(headers.get("content-type"))
        if status >= 300:
            return READ_REFUSAL
        if call.method == "initialize":
            call.offered_session = headers.get("mcp-session-id")
        if kind == "application/json":
            return READ_JSON
        if kind == "text/event-stream":
            return READ_EVENTS
        if status == 202 and call.revision is None and self.get_open and not call.private:
            # Servers of old answered on the GET stream; the call stays open
            # (bounded by the caller's deadline).
            call.parked = True
            return PARKED
        if status in (202, 204):
            return Fail(
                self._http_error(
                    status, headers, b"", f"{call.method} got HTTP {status}: the server will send no answer"
                )
            )
        return READ_REFUSAL

    def refusal(
        self, call: Call, exchange: int, status: int, headers: Mapping[str, str], body: bytes, now: float
    ) -> Deliver | Fail | Next:
        """A response to ``call`` that is no answer in itself: an error status, or a 2xx of another kind.

        Returns the JSON-RPC error the body carries (as ``call``'s answer), the
        error to fail it with, `LOST` (the session is lost: see `lost`),
        `RESEND` (a 2026-07-28 ``-32022`` naming the revision asked for: send
        it once more) or `FALL_BACK` (``initialize`` refused without an MCP
        body: the server may speak HTTP+SSE). ``now`` is the POSIX time, for
        ``Retry-After`` dates.
        """
        if exchange != call.exchange:
            return Fail(ProtocolError(f"a response to {call.method} on an exchange that is over"))
        kind = media_type(headers.get("content-type"))
        method = call.method
        if status < 300:
            return Fail(
                self._http_error(
                    status,
                    headers,
                    body,
                    f"{method} got HTTP {status} with content type {kind or 'none'!r}, not JSON or an event stream",
                )
            )
        text = body[:ERROR_BODY_KEEP].decode("utf-8", "replace")
        typed = typed_refusal(self.name, self.url, method, status, headers, text, now)
        if typed is not None:
            return Fail(typed)
        error = rpc_error_body(body) if kind == "application/json" else None
        if (
            call.revision is None
            and call.session_sent
            and method != "initialize"
            and (status == 404 or (status == 400 and error is not None and lost_session(error)))
        ):
            if call.private:
                # A request of a renewal: the new session is lost already.
                return Fail(ProtocolError(f"{self.name} refused {method} of a new session (HTTP {status})"))
            detail = str(error.get("message", "")) if error is not None else text
            call.lost = (status, detail[:200])
            return LOST
        if error is not None and call.answered:
            # Answered already (on this exchange): never a second time.
            return Fail(ProtocolError(f"{self.name} sent a second answer to {call.method}: {text[:80]!r}"))
        if error is not None:
            if (
                error.get("code") == UNSUPPORTED_PROTOCOL_VERSION
                and call.revision is not None
                and not call.resent
                and call.revision in _supported(error)
            ):
                # The server lists the revision we asked for: once more.
                call.resent = True
                return RESEND
            # Whatever id the body carries (null, "server-error"): one request per POST.
            call.answered = True
            if call.private:
                call.answer = {"error": error}
            return Deliver(
                encode({"jsonrpc": "2.0", "id": call.request_id, "error": error}).rstrip(b"\n"), call
            )
        if method == "initialize" and status in (400, 404, 405) and not call.private:
            return FALL_BACK
        hint = ""
        if 300 <= status < 400:
            hint = f"; redirected to {headers.get('location', '(no location)')!r}, which is not followed"
            hint += " (only 307 and 308 to the same origin are)"
        elif status in (406, 415):
            hint = " (the server refused our headers)"
        refused = self._http_error(
            status, headers, body, f"{self.name} answered {method} with HTTP {status}{hint}"
        )
        if method == "server/discover" and 400 <= status < 500:
            # Not an MCP answer: for the era probe, a server of the initialize era.
            broken = ProtocolError(f"server/discover got HTTP {status} without a JSON-RPC error")
            broken.__cause__ = refused
            return Fail(broken)
        return Fail(refused)

    def fallback_failed(
        self, call: Call, status: int, headers: Mapping[str, str], body: bytes, why: MCPError
    ) -> Fail:
        """``initialize`` was refused (`Next.FALL_BACK`) and the server does not speak HTTP+SSE
        either (``why``): the call fails with the refusal, caused by ``why``."""
        error = self._http_error(
            status,
            headers,
            body,
            f"{self.name} answered {call.method} with HTTP {status}; nor does it speak HTTP+SSE: {why}",
        )
        error.__cause__ = why
        return Fail(error)

    def _http_error(self, status: int, headers: Mapping[str, str], body: bytes, message: str) -> HTTPError:
        return HTTPError(
            f"{message} ({self.url})",
            url=self.url,
            status=status,
            headers=dict(headers),
            body=body[:ERROR_BODY_KEEP].decode("utf-8", "replace"),
        )

    def json_body(self, call: Call, exchange: int, body: bytes, status: int = 200) -> list[Action]:
        """A JSON body answering ``call``'s POST (with ``status``). Ends with a `Fail` unless it
        was the call's answer."""
        if exchange != call.exchange:
            return [Fail(ProtocolError(f"a response to {call.method} on an exchange that is over"))]
        if not body.strip():
            return [
                Fail(self._http_error(status, {}, b"", f"{call.method} got HTTP {status} with an empty body"))
            ]
        out: list[Action] = []
        message = self._messages(call, body, out, single=True)
        if not call.answered:
            what = "its response" if message is not None else "JSON"
            # The answer of another call (one over, or in flight): the
            # connection delivered a response that was not for this request.
            other = isinstance(message, dict) and not self._nobodys(message.get("id"))
            out.append(
                Fail(
                    ProtocolError(
                        f"{self.name} answered request {call.request_id!r} ({call.method}) with a JSON body"
                        f" that is not {what}: {body[:80]!r}"
                    ),
                    out_of_step=other,
                )
            )
        return out

    def event(self, call: Call, exchange: int, item: Item) -> list[Action]:
        """An item of the event stream carrying ``call`` (its POST's, or a resumption of it)."""
        if exchange != call.exchange:
            return [Log(f"an event for {call.method} on an exchange that is over; dropped")]
        modern = call.revision is not None
        out: list[Action] = []
        if not modern:
            if item.id:
                call.last_event_id = item.id
            if isinstance(item, Event) and item.id and item.own_id:
                if item.id in call.seen:
                    return [Log(f"{self.name} sent event {item.id!r} again (a replay); dropped")]
                remember(call.seen, item.id, CALL_EVENTS)
        if isinstance(item, EventTooLarge):
            return [Fail(_too_large(self.name, item.limit))]
        if isinstance(item, BadEncoding):
            return [Fail(ProtocolError(f"{self.name} sent an event whose {item.field} is not UTF-8"))]
        if not isinstance(item, Event):
            return []  # a cut event: the end of the stream says what follows
        if item.type != "message":
            return [Log(f"{self.name} sent an event of type {item.type!r}; ignored")]
        data = item.data.encode("utf-8", "surrogatepass")
        if not isinstance(self._messages(call, data, out, single=False), (dict, list)):
            out.append(
                Fail(ProtocolError(f"{self.name} sent an event whose data is not JSON-RPC: {data[:80]!r}"))
            )
        return out

    def _messages(self, call: Call, data: bytes, out: list[Action], *, single: bool) -> JSON | None:
        """Decode ``data`` (a body or an event's data) and take each JSON-RPC object in it, a
        batch's too; return what was decoded (`None`: not JSON). ``single``: ``data`` is a whole
        response body, the answer to ``call`` alone."""
        try:
            message = decode(data)
        except UnreadableJSON:
            return None
        if isinstance(message, dict):
            self._message(call, message, data, out, single=single)
        elif isinstance(message, list):
            for part in message:
                if isinstance(part, dict):
                    self._message(call, part, encode(part).rstrip(b"\n"), out, single=False)
        return message

    def stream_position(self, call: Call, last_event_id: str, retry: int | None) -> None:
        """Where the stream of ``call`` stands: its last event id and ``retry`` (milliseconds), as
        its parser has them, for its resumption (a priming event sets them and delivers nothing)."""
        call.retry = retry
        if call.revision is None and last_event_id:
            call.last_event_id = last_event_id

    def get_position(self, last_event_id: str, retry: int | None) -> None:
        """Where the GET stream stands (its parser's last event id and ``retry``), for reopening it."""
        self._get_retry = retry
        if last_event_id:
            self._get_last_id = last_event_id

    def unanswered(self, call: Call) -> bool:
        """``call``'s POST failed before any response came (a kept-alive connection the server
        had just closed, say): whether to send it once more. Only for methods without side
        effects, once. A resend the server asked for (a ``-32022`` naming the revision) is
        another cause: the request it sent again can still meet a closed connection."""
        if call.method not in _SAFE or call.resent_unread or call.private:
            return False
        call.resent_unread = True
        return True

    def stream_ended(self, call: Call, exchange: int, why: str | None, status: int) -> Fail | Resume | None:
        """The stream carrying ``call`` ended (``why``: the network error, if any; ``status``: the
        status of the response whose stream it was).

        Returns `None` when the call was answered, else how to resume it
        (initialize era, with an event id and a session, a bounded number of
        times), else why it fails.
        """
        if call.answered or exchange != call.exchange:
            return None
        last = call.last_event_id
        how = f": {why}" if why else ""
        if call.revision is None and last and self.session_id is not None and call.resumes < MAX_RESUMES:
            call.resumes += 1
            call.exchange += 1
            return Resume(self.stream_headers(last), retry_delay(call.retry, call.resumes))
        return Fail(
            ConnectionFailed(
                f"the stream of request {call.request_id!r} ({call.method}) from {self.name} ended before its answer{how}",
                url=self.url,
                status=status,
            )
        )

    def resumed(self, call: Call, exchange: int, status: int, content_type: str | None) -> Fail | None:
        """The head of the GET resuming ``call``'s stream: `None` to read it, or why the call fails."""
        if exchange != call.exchange:
            return Fail(ProtocolError("a resumption on an exchange that is over"))
        if status != 200 or media_type(content_type) != "text/event-stream":
            return Fail(
                ConnectionFailed(
                    f"the stream of request {call.request_id!r} ({call.method}) from {self.name} was cut, and"
                    f" resuming it from event {call.last_event_id!r} got HTTP {status}",
                    url=self.url,
                    status=status,
                )
            )
        return None

    # ------------------------------------------------------------ messages

    def _message(
        self, call: Call | None, message: dict[str, JSON], data: bytes, out: list[Action], *, single: bool
    ) -> None:
        """Route one message read on ``call``'s exchange (``None``: the GET stream)."""
        if "method" in message:
            if "id" in message:
                request_id = message["id"]
                key = _key(request_id)
                if key is not None and (call is None or call.revision is None):
                    if key in self._served:
                        out.append(
                            Log(f"{self.name} sent its request {request_id!r} again (a replay); dropped")
                        )
                        return
                    remember(self._served, key, MEMORY)
            out.append(Deliver(data))
            return
        if "result" not in message and "error" not in message:
            out.append(
                Log(
                    f"{self.name} sent a message that is neither request, notification nor answer: {data[:80]!r}"
                )
            )
            return
        answer_id = message.get("id")
        target: Call | None = None
        if call is not None:
            if not call.answered and _same_id(answer_id, call.request_id):
                target = call
            elif single and not call.answered and self._nobodys(answer_id):
                # One answer per POST: under an id that is no call's, it is this one's.
                out.append(
                    Log(
                        f"the answer to request {call.request_id!r} ({call.method}) came with id {answer_id!r}; taken as its answer"
                    )
                )
                message = {**message, "id": call.request_id}
                data = encode(message).rstrip(b"\n")
                target = call
        else:
            # The GET stream of the initialize era: an answer to one of our
            # requests sent and still open (servers of old answer there, with a
            # 202 to the POST).
            parked = self._calls.get(answer_id) if isinstance(answer_id, (int, str)) else None
            if (
                parked is not None
                and parked.revision is None
                and not parked.private
                and parked.exchange > 0
                and not parked.answered
                and _same_id(answer_id, parked.request_id)
            ):
                target = parked
        if target is None:
            where = (
                f"the stream of request {call.request_id!r}"
                if call is not None
                else "the stream of server messages"
            )
            out.append(Log(f"{self.name} sent an answer for id {answer_id!r} on {where}; dropped"))
            return
        target.answered = True
        if target.method == "initialize":
            self._adopt(target, message, out)
        if target.private:
            target.answer = message
        else:
            # Answered on the GET stream while its own POST is still open: that exchange is over.
            out.append(Deliver(data, target, ends_exchange=call is None and not target.parked))

    def _nobodys(self, answer_id: object) -> bool:
        key = _key(answer_id)
        if key is None:
            return True
        return answer_id not in self._calls and key not in self._finished

    def _adopt(self, call: Call, message: dict[str, JSON], out: list[Action]) -> None:
        """The answer to ``initialize``: a success starts a session (its id, its revision)."""
        result = message.get("result")
        if not isinstance(result, dict):
            return
        version = result.get("protocolVersion")
        if isinstance(version, str):
            self.version = version
        offered = call.offered_session
        if offered is not None and not valid_session_id(offered):
            out.append(
                Log(f"{self.name} sent a session id with invalid characters; the session is used without it")
            )
            offered = None
        self.session_id = offered
        self.generation += 1
        self._served.clear()
        self._get_seen.clear()
        self._get_last_id = ""

    # ------------------------------------------------------------ sessions

    def next_step(self, call: Call, outcome: Next | None) -> Send | SendSse | AwaitGate | AwaitRenewal | Fail:
        """What ``call`` does next: ``outcome`` is `None` before its first POST, else what its last
        exchange (or the wait for a renewal) came to: `Next.RESEND` or `Next.LOST`.

        An initialize-era call sent while ``notifications/initialized`` is on
        its way (`handshake`) waits for it and for the GET stream to open.
        Once the server turned out to speak HTTP+SSE, calls go over that link.
        An initialize-era call waits while the session is being renewed, and
        goes out in the new session. A call that found the session lost starts
        the renewal (one, however many calls found it lost), waits for the one
        in flight, or is sent again once in the new session; else it fails.
        """
        if outcome is None:
            if call.revision is None and self._gates and not call.private:
                return AwaitGate()
            if self.fell_back:
                return SEND_SSE
        if outcome is Next.LOST:
            step = self.lost(call)
            if isinstance(step, Fail):
                return step
            if step is Next.RENEW:
                return AwaitRenewal(Next.LOST, start=True)
            if step is Next.WAIT:
                return AwaitRenewal(Next.LOST)
            outcome = Next.RESEND
        if call.revision is None and self.renewing:
            # A new session is being opened: this call goes out in it.
            return AwaitRenewal(outcome)
        return SEND

    def lost(self, call: Call) -> Next | Fail:
        """``call`` found the session lost: `RENEW` (the caller renews it), `WAIT` (a renewal is in
        flight), `RESEND` (a new session is there), or why the call fails."""
        status, detail = call.lost
        if call.resent:
            return Fail(
                self._expired(
                    f"{self.name} no longer knows the session (HTTP {status}: {detail}),"
                    " even after a new one was opened",
                    status,
                )
            )
        failure = self._renewal_failure
        if failure is not None and failure[0] >= call.generation:
            return Fail(failure[1])
        if self.generation > call.generation:
            call.resent = True
            return RESEND
        if self.renewing:
            return WAIT
        if self._initialize is None:
            return Fail(
                self._expired(f"{self.name} no longer knows the session (HTTP {status}: {detail})", status)
            )
        self.renewing = True
        self.renewals += 1
        self.session_id = None
        return RENEW

    def renew(self) -> Generator[RenewalStep, MCPError | None, None]:
        """The renewal of a lost session, step by step: the loop runs each step and sends back
        what came of it (for a `PostCall`, the error that kept the call from an answer).

        The new session gets what the session had been told, in order:
        ``initialize`` (as first sent), ``notifications/initialized``, the
        last ``logging/setLevel`` and each ``resources/subscribe`` in force;
        then the stream of server messages is opened again. However the
        renewal ends (refused, broken, closed by the loop half-way), the
        calls waiting for it learn the outcome from `next_step`.
        """
        initialize, state = self.renewal()
        # Whether this renewal's initialize is over (answered, refused or failed): from then on
        # `renewing` and `_renewal` may already speak of a later renewal, which is not ours to end.
        concluded = False
        try:
            yield Log(f"{self.name} forgot our session; opening a new one")
            error = yield PostCall(initialize)
            concluded = True
            if error is not None:
                self.renewal_failed(initialize, error)
                return
            if self.renewed(initialize) is not None:
                return
            if self.initialized is not None:
                yield PostMessage(self.initialized)
            for call in state:
                error = yield PostCall(call)
                if error is not None and not call.answered:
                    call.answer = {"error": {"message": str(error)}}
                self.finish(call)
                answer = call.answer or {}
                if "result" not in answer:
                    yield Log(f"the new session refused {call.method} again: {answer.get('error')!r}")
            if self._get_started and not self._get_running and not self.fell_back:
                # The old session's stream ended with it: one for the new session.
                self._get_running = True
                yield OpenGet()
        finally:
            if not concluded and self.renewing and self._renewal is initialize:
                # Cut before its initialize was answered (a later renewal is another's).
                self.renewal_failed(initialize, ProtocolError("the renewal was interrupted"))
            for call in state:
                self.finish(call)

    # ------------------------------------------------------------ the handshake

    def gates(self, method: str | None, revision: str | None) -> bool:
        """Whether this message of the session's ends the handshake (``notifications/initialized``
        of the initialize era): send it with `handshake`."""
        return method == "notifications/initialized" and revision is None

    @property
    def gate_open(self) -> bool:
        """Whether initialize-era calls may go (no `handshake` under way)."""
        return not self._gates

    def handshake(self, data: bytes) -> Generator[HandshakeStep, None, None]:
        """``notifications/initialized`` (``data``), then the GET stream of server messages.

        While this runs, initialize-era calls wait (`AwaitGate`); however it
        ends (done, failed, closed by the loop when the handshake's time is
        up), they go. The GET stream is opened once, when a session exists
        and the server speaks Streamable HTTP; the handshake waits for its
        first response, so that what the server sends on it at once is not
        lost to a request that went first.
        """
        self.initialized = data
        self._gates += 1
        try:
            yield PostMessage(data)
            if self.session_id is not None and not self.fell_back and not self._get_started:
                self._get_started = True
                self._get_running = True
                yield OpenGet(wait=True)
        finally:
            self._gates -= 1

    def renewal(self) -> tuple[Call, list[Call]]:
        """The requests of a renewal: ``initialize`` (as first sent), then what the session must be
        told again (the last ``logging/setLevel``, every ``resources/subscribe`` in force)."""
        assert self._initialize is not None
        initialize = self.private(self._initialize)
        self._renewal = initialize
        return initialize, [self.private(data) for data in self._state.values()]

    def renewed(self, initialize: Call) -> MCPError | None:
        """The renewal's ``initialize`` is over: `None` when a new session started, else why not."""
        self.renewing = False
        self.finish(initialize)
        if (
            initialize.answered
            and isinstance((initialize.answer or {}).get("result"), dict)
            and self.session_id
        ):
            self._renewal_failure = None
            return None
        error = self._expired(f"{self.name} forgot our session, and opening a new one failed")
        self._renewal_failure = (self.generation, error)
        return error

    def renewal_failed(self, initialize: Call, error: MCPError) -> MCPError:
        """The renewal's ``initialize`` could not be sent: every call waiting fails with this."""
        self.renewing = False
        self.finish(initialize)
        expired = self._expired(f"{self.name} forgot our session, and opening a new one failed: {error}")
        self._renewal_failure = (self.generation, expired)
        return expired

    def _expired(self, message: str, status: int | None = None) -> SessionExpired:
        return SessionExpired(message, url=self.url, status=status)

    # ------------------------------------------------------------ the GET stream

    def get_stream(self) -> Generator[GetStep, GetEvent | None, None]:
        """The initialize era's stream of server messages that belong to no request, step by step.

        GET it (`GetRequest`, answered with `GetHead` or `GetFailed`), read it
        (`ReadGet`, answered with `GetEnded`), and when it ends open it again
        after a delay (`Sleep`: the server's ``retry``, else a back-off). It
        is given up when refused for good (400, 404, 405, 409), or after
        `MAX_GET_FAILURES` failures in a row; a connection that carried an
        event resets that count. Closing the script ends it.
        """
        self._get_started = True
        self._get_running = True
        try:
            while True:
                reply = yield GetRequest(self.get_headers())
                failed = True
                if isinstance(reply, GetHead):
                    refused = self.get_response(reply.status, reply.content_type)
                    if refused is None:
                        self.get_open = True
                        ended = yield READ_GET
                        self.get_open = False
                        if isinstance(ended, GetEnded):
                            self.get_position(ended.last_event_id, ended.retry)
                            failed = ended.why is not None
                            if ended.why is not None:
                                yield Log(f"the stream of server messages broke: {ended.why}")
                    else:
                        yield Log(refused.reason)
                        if refused.final:
                            return
                elif isinstance(reply, GetFailed):
                    yield Log(f"the stream of server messages failed: {reply.why}")
                delay = self.get_ended(failed)
                if delay is None:
                    yield Log(
                        f"the stream of server messages failed {self._get_failures} times in a row; given up"
                    )
                    return
                yield Sleep(delay)
        finally:
            self.get_open = False
            self._get_running = False

    def get_headers(self) -> dict[str, str]:
        """The headers of the next GET of the server's stream."""
        self._get_carried = 0
        return self.stream_headers(self._get_last_id)

    def get_response(self, status: int, content_type: str | None) -> GetRefused | None:
        """The head of the GET stream's response: `None` to read it, else why it is no stream."""
        kind = media_type(content_type)
        if status in (400, 404, 405, 409):
            why = {405: "offers none", 409: "says one is open already"}.get(status, f"answered {status}")
            return GetRefused(f"no stream of server messages: {self.name} {why}", final=True)
        if status != 200 or kind != "text/event-stream":
            return GetRefused(
                f"the stream of server messages got HTTP {status} ({kind or 'no content type'})", final=False
            )
        return None

    def get_event(self, item: Item, retry: int | None) -> list[Action]:
        """An item of the GET stream (``retry``: the stream's current ``retry``)."""
        self._get_retry = retry
        if item.id:
            self._get_last_id = item.id
        if isinstance(item, Event) and item.id and item.own_id:
            if item.id in self._get_seen:
                return [Log(f"{self.name} sent event {item.id!r} again (a replay); dropped")]
            remember(self._get_seen, item.id, MEMORY)
        if isinstance(item, EventTooLarge):
            return [Log(str(_too_large(self.name, item.limit)) + "; skipped")]
        if isinstance(item, BadEncoding):
            return [Log(f"{self.name} sent an event whose {item.field} is not UTF-8; skipped")]
        if not isinstance(item, Event):
            return []
        self._get_carried += 1
        if item.type != "message":
            return [Log(f"{self.name} sent an event of type {item.type!r}; ignored")]
        data = item.data.encode("utf-8", "surrogatepass")
        try:
            message = decode(data)
        except UnreadableJSON:
            return [Log(f"{self.name} sent an event whose data is not JSON: {data[:80]!r}; skipped")]
        out: list[Action] = []
        for part in message if isinstance(message, list) else [message]:
            if isinstance(part, dict):
                self._message(
                    None, part, data if part is message else encode(part).rstrip(b"\n"), out, single=False
                )
            else:
                out.append(Log(f"{self.name} sent an event that is not JSON-RPC: {data[:80]!r}; skipped"))
        return out

    def get_ended(self, failed: bool) -> float | None:
        """The GET stream's connection is over (``failed``: it never opened, or broke): the delay
        before reopening it, or `None` to give it up. However many events it carried before,
        a connection that carried one resets the count of failures."""
        if self._get_carried and not failed:
            self._get_failures = 0
        elif self._get_carried:
            self._get_failures = 1
        else:
            self._get_failures += 1
        self._get_carried = 0
        if self._get_failures >= MAX_GET_FAILURES:
            return None
        return retry_delay(self._get_retry, self._get_failures + 1)

    @property
    def get_failures(self) -> int:
        """How many times in a row the GET stream failed."""
        return self._get_failures


def _same_id(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _supported(error: dict[str, JSON]) -> list[str]:
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _too_large(name: str, limit: int) -> MCPError:
    return MessageTooLarge(
        f"{name} sent an event over the limit of {limit} bytes (max_message_bytes); the stream is closed",
        size=limit,
        limit=limit,
    )

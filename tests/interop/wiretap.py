"""A tap on what the client writes, and a strict check of it against the MCP revision in use.

`WireTap.install` gives every `trio_mcp.Session` made during one test (with
pytest's monkeypatch) an ``on_wire`` observer, the option that sees every
line the client sends (one complete JSON line per call) and every line read
from the server. The lines are kept per session, in order.

`WireTap.check` then checks each line the client wrote, for one revision:

* framing: one JSON object, UTF-8, on one line ending in a single LF;
* the JSON-RPC envelope of its kind (``JSONRPCRequest``,
  ``JSONRPCNotification``, the response envelopes) and, for a request or a
  notification, its own definition (``CallToolRequest``, ...) in the official
  schema of that revision; a method the revision's client may not send fails;
* answers to the server's requests (legacy era only) against the result
  definition of the request's method (``CreateMessageResult``, ...);
* rules the schema cannot express: request ids are never reused; progress
  tokens are unique among requests in flight; a cancellation names a request
  of the client's, never ``initialize``; the ``server/discover`` probe is a
  valid 2026-07-28 request; legacy era: ``initialize`` first,
  ``notifications/initialized`` before anything else but ``ping``, no
  2026-07-28 envelope on requests, no ``inputResponses``/``requestState``,
  answers only to requests the server made, each once; 2026-07-28 era:
  ``_meta`` names that revision, the client sends no responses, and each
  multi round-trip retry repeats the original params, answers exactly the
  keys the server asked for, each with the result of its method, without
  ``resultType``, and returns ``requestState`` unchanged.

The schemas are read from ``mcp-schema/`` in the folder beside the repository
(``../shared/mcp-schema``), or from the folder named by ``MCP_SCHEMA_DIR``,
by ``tests/schema_support.py``. Without them (or without jsonschema) only
the rules are checked; `schema_problem` says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import attrs
from schema_support import by_method, defs, envelope_definition, result_definition, schema_problem, validator

from trio_mcp import Session, SessionOptions

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
REVISIONS = (*LEGACY, MODERN)
ENVELOPE_KEYS = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
)


class WireError(AssertionError):
    """What the client wrote broke the protocol; the message lists every problem."""


@cache
def client_methods(revision: str) -> tuple[dict[str | None, str], dict[str | None, str]]:
    """What the client may send in a revision: request and notification methods -> definition."""
    return by_method(revision, "ClientRequest"), by_method(revision, "ClientNotification")


def _key(request_id: object) -> tuple[str, object]:
    # 1 and "1" are different ids.
    return (type(request_id).__name__, request_id)


def _meta(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _identity(params: object) -> object:
    """The params of a request without what a multi round-trip retry adds or renews."""
    if not isinstance(params, dict):
        return params
    return {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}


@dataclass
class Connection:
    """Everything one transport wrote and read, in order."""

    transport: Any
    events: list[tuple[str, bytes]] = field(default_factory=list)
    revision: str | None = None

    @property
    def written(self) -> list[dict[str, Any]]:
        """The messages the client wrote (those that parse)."""
        out = []
        for direction, line in self.events:
            if direction == "out":
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    @property
    def read(self) -> list[dict[str, Any]]:
        """The messages the server wrote (those that parse as an object)."""
        found = []
        for direction, line in self.events:
            if direction == "in":
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                found.extend(
                    m for m in (message if isinstance(message, list) else [message]) if isinstance(m, dict)
                )
        return found


class WireTap:
    """Records what transports write and read; `check` validates it."""

    def __init__(self) -> None:
        self.connections: list[Connection] = []
        self._by_transport: dict[int, Connection] = {}

    @classmethod
    def install(cls, monkeypatch: Any) -> WireTap:
        tap = cls()
        # Every session is set up here (``Session(...)`` itself refuses): the tap wraps its on_wire.
        setup = Session._setup

        def tapped_setup(self: Session, channel: Any, options: Any = None, **kwargs: Any) -> None:
            options = options if options is not None else SessionOptions()
            previous = options.on_wire

            def on_wire(direction: str, line: bytes) -> None:
                tap.record(self, direction, bytes(line))
                if previous is not None:
                    previous(direction, line)

            setup(self, channel, attrs.evolve(options, on_wire=on_wire), **kwargs)

        monkeypatch.setattr(Session, "_setup", tapped_setup)
        return tap

    def record(self, transport: Any, direction: str, line: bytes) -> None:
        # The connection keeps the transport alive, so its id is never reused.
        connection = self._by_transport.get(id(transport))
        if connection is None:
            connection = Connection(transport)
            self._by_transport[id(transport)] = connection
            self.connections.append(connection)
        connection.events.append((direction, line))

    def connection(self, client_or_transport: Any) -> Connection:
        transport = getattr(client_or_transport, "session", client_or_transport)
        for connection in self.connections:
            if connection.transport is transport:
                return connection
        raise WireError(f"nothing was written on {transport!r}")

    def written(self, client_or_transport: Any = None) -> list[dict[str, Any]]:
        """The messages written on one connection, or on all of them."""
        if client_or_transport is not None:
            return self.connection(client_or_transport).written
        return [m for c in self.connections for m in c.written]

    def check(self, revision: str | None, client_or_transport: Any = None) -> None:
        """Check the lines written so far under ``revision``, the one the test says was negotiated.

        With a client (or transport), that connection; without, every
        connection not yet given a revision. The revision sticks: the
        fixture checks everything again at the end of the test, lines written
        while closing included.
        """
        if revision not in REVISIONS:
            raise WireError(f"{revision!r} is not an MCP revision this check knows ({', '.join(REVISIONS)})")
        if client_or_transport is not None:
            targets = [self.connection(client_or_transport)]
        else:
            targets = [c for c in self.connections if c.revision is None]
            if not targets:
                raise WireError("no connection without a revision to check")
        for connection in targets:
            connection.revision = revision
        self._raise([p for c in targets for p in check_connection(c.events, revision)])

    def check_all(self, *, strict: bool = True) -> None:
        """Check every connection under the revision it was given (the fixture's final check).

        ``strict``: a connection that wrote lines but was given no revision is a problem.
        """
        problems = []
        for number, connection in enumerate(self.connections):
            if connection.revision is None:
                if strict and any(direction == "out" for direction, _ in connection.events):
                    problems.append(
                        f"connection {number}: the test never said which revision was negotiated"
                        " (call wire.check(client.protocol_version, client))"
                    )
                continue
            problems.extend(check_connection(connection.events, connection.revision))
        self._raise(problems)

    @staticmethod
    def _raise(problems: list[str]) -> None:
        if problems:
            raise WireError(f"{len(problems)} problem(s) on the wire:\n" + "\n".join(problems))


def check_connection(events: list[tuple[str, bytes]], revision: str) -> list[str]:
    """Every problem with what the client wrote on one connection, as readable lines."""
    return _Checker(revision).run(events)


class _Checker:
    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.modern = revision == MODERN
        self.schemas = schema_problem() is None
        self.problems: list[str] = []
        self.line_no = 0
        self.sent: dict[tuple[str, object], dict[str, Any]] = {}  # client requests by id
        self.in_flight: set[tuple[str, object]] = set()
        self.server_requests: dict[tuple[str, object], str] = {}  # unanswered, by id
        self.answered_server: set[tuple[str, object]] = set()
        # 2026-07-28: the last input_required result per (method, params identity)
        self.asked: dict[str, dict[str, Any]] = {}
        self.initialize_id: tuple[str, object] | None = None
        self.initialized = False
        self.first_request = True

    def run(self, events: list[tuple[str, bytes]]) -> list[str]:
        for direction, line in events:
            if direction == "in":
                self.server_line(line)
            else:
                self.line_no += 1
                self.client_line(line)
        return self.problems

    def fail(self, message: dict[str, Any] | bytes | None, problem: str) -> None:
        shown = message if isinstance(message, bytes) else json.dumps(message)[:400]
        self.problems.append(f"line {self.line_no} ({self.revision}): {problem}\n    {shown}")

    def validate(self, message: Any, revision: str, definition: str) -> None:
        if not self.schemas:
            return
        if definition not in defs(revision):
            self.fail(message, f"{definition} is not defined in the {revision} schema")
            return
        errors = sorted(validator(revision, definition).iter_errors(message), key=lambda e: list(e.path))
        for error in errors[:3]:
            where = "/".join(str(p) for p in error.absolute_path) or "(top)"
            self.fail(message, f"not a valid {definition} of {revision} at {where}: {error.message[:300]}")

    # ---------------------------------------------------------------- reading

    def server_line(self, line: bytes) -> None:
        try:
            parsed = json.loads(line)
        except ValueError:
            return
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:
                self.server_requests[_key(message["id"])] = message["method"]
            elif "id" in message and "method" not in message:
                key = _key(message["id"])
                self.in_flight.discard(key)
                request = self.sent.get(key)
                result = message.get("result")
                if (
                    request is not None
                    and isinstance(result, dict)
                    and result.get("resultType") == "input_required"
                ):
                    slot = json.dumps([request["method"], _identity(request.get("params"))], sort_keys=True)
                    self.asked[slot] = result

    # ---------------------------------------------------------------- writing

    def client_line(self, line: bytes) -> None:
        if not line.endswith(b"\n") or line.count(b"\n") != 1:
            self.fail(line, "a message must be one line ending in a single LF")
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.fail(line, f"not UTF-8 JSON: {exc}")
            return
        if not isinstance(message, dict):
            self.fail(line, "not a JSON object (batches are never sent)")
            return
        if message.get("jsonrpc") != "2.0":
            self.fail(message, 'every message needs "jsonrpc": "2.0"')
        if "method" in message and "id" in message:
            self.request(message)
        elif "method" in message:
            self.notification(message)
        elif "id" in message and ("result" in message or "error" in message):
            self.response(message)
        else:
            self.fail(message, "neither a request, a notification nor a response")

    def request(self, message: dict[str, Any]) -> None:
        method = message["method"]
        request_id = message["id"]
        key = _key(request_id)
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            self.fail(message, "a request id must be a string or an integer")
        elif key in self.sent:
            self.fail(message, f"request id {request_id!r} was used before")
        self.sent[key] = message
        self.in_flight.add(key)
        params = message.get("params")
        meta = _meta(message)
        token = meta.get("progressToken")
        if token is not None:
            for other in self.in_flight - {key}:
                if _meta(self.sent[other]).get("progressToken") == token:
                    self.fail(message, f"progress token {token!r} is already used by a request in flight")
        first = self.first_request
        self.first_request = False

        if method == "server/discover" and not self.modern:
            # The probe of a client that then fell back to initialize.
            if not first:
                self.fail(
                    message, "server/discover on a legacy connection is only allowed as the first request"
                )
            self.modern_request(message, MODERN)
            return
        if self.modern:
            self.modern_request(message, self.revision)
            return

        # -- legacy era
        requests, _ = client_methods(self.revision) if self.schemas else ({}, {})
        if self.schemas and method not in requests:
            self.fail(message, f"{method} is not a request a {self.revision} client may send")
        self.validate(message, self.revision, "JSONRPCRequest")
        if method in requests:
            self.validate(message, self.revision, requests[method])
        if method == "initialize":
            if self.initialize_id is not None:
                self.fail(message, "initialize was sent twice")
            self.initialize_id = key
        elif self.initialize_id is None:
            self.fail(message, "the first request of a legacy connection must be initialize")
        elif not self.initialized and method != "ping":
            self.fail(message, "only ping may precede notifications/initialized")
        leaked = [k for k in ENVELOPE_KEYS if k in meta]
        if leaked:
            self.fail(message, f"the 2026-07-28 envelope ({', '.join(leaked)}) on a legacy request")
        if isinstance(params, dict) and ("inputResponses" in params or "requestState" in params):
            self.fail(message, "inputResponses/requestState do not exist before 2026-07-28")

    def modern_request(self, message: dict[str, Any], revision: str) -> None:
        method = message["method"]
        requests, _ = client_methods(revision) if self.schemas else ({}, {})
        if self.schemas and method not in requests:
            self.fail(message, f"{method} is not a request a {revision} client may send")
        self.validate(message, revision, "JSONRPCRequest")
        if method in requests:
            self.validate(message, revision, requests[method])
        params = message.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
            self.fail(message, "a 2026-07-28 request needs params._meta")
            return
        meta = params["_meta"]
        if meta.get("io.modelcontextprotocol/protocolVersion") != revision:
            self.fail(message, f"_meta names protocol version {meta.get(ENVELOPE_KEYS[0])!r}, not {revision}")
        if "io.modelcontextprotocol/clientCapabilities" not in meta:
            self.fail(message, "_meta lacks io.modelcontextprotocol/clientCapabilities")
        if "inputResponses" in params or "requestState" in params:
            self.retry(message, params)

    def retry(self, message: dict[str, Any], params: dict[str, Any]) -> None:
        slot = json.dumps([message["method"], _identity(params)], sort_keys=True)
        asked = self.asked.pop(slot, None)
        if asked is None:
            self.fail(
                message,
                "inputResponses/requestState, but no earlier input_required answer to the same method"
                " with the same params (a retry must repeat the original params)",
            )
            return
        if asked.get("requestState") != params.get("requestState"):
            if "requestState" not in asked:
                self.fail(message, "requestState sent, but the server sent none")
            else:
                self.fail(message, "requestState differs from the one the server sent (it must be unchanged)")
        questions = asked.get("inputRequests") or {}
        answers = params.get("inputResponses")
        if not questions:
            if answers:
                self.fail(message, "inputResponses sent, but the server asked no question")
            return
        if not isinstance(answers, dict):
            self.fail(message, "the server asked questions, and the retry has no inputResponses")
            return
        if set(answers) != set(questions):
            self.fail(
                message,
                f"inputResponses keys {sorted(answers)} are not the keys asked {sorted(questions)}",
            )
        for key, answer in answers.items():
            question = questions.get(key)
            if not isinstance(question, dict):
                continue
            if isinstance(answer, dict) and "resultType" in answer:
                self.fail(message, f"input response {key!r} carries resultType (it is not a Result)")
            definition = result_definition(self.revision, question.get("method", "")) if self.schemas else ""
            if self.schemas:
                errors = list(validator(self.revision, definition).iter_errors(answer))
                for error in errors[:3]:
                    self.fail(
                        message,
                        f"input response {key!r} to {question.get('method')} is not a valid {definition}:"
                        f" {error.message[:300]}",
                    )

    def notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        _, notes = client_methods(self.revision) if self.schemas else ({}, {})
        if self.schemas and method not in notes:
            self.fail(message, f"{method} is not a notification a {self.revision} client may send")
        self.validate(message, self.revision, "JSONRPCNotification")
        if method in notes:
            self.validate(message, self.revision, notes[method])
        params = message.get("params")
        if method == "notifications/initialized":
            if self.modern:
                self.fail(message, "no initialized notification in 2026-07-28")
            elif self.initialize_id is None or self.initialize_id in self.in_flight:
                self.fail(message, "notifications/initialized before the answer to initialize")
            elif self.initialized:
                self.fail(message, "notifications/initialized sent twice")
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            if "requestId" not in params:
                self.fail(message, "a cancellation must name the request (requestId)")
                return
            named = _key(params["requestId"])
            if named not in self.sent:
                self.fail(message, f"cancels {params['requestId']!r}, which the client never sent")
            elif named == self.initialize_id:
                self.fail(message, "initialize must never be cancelled")
            self.in_flight.discard(named)

    def response(self, message: dict[str, Any]) -> None:
        if self.modern:
            self.fail(message, "a 2026-07-28 client sends no responses (servers send no requests)")
            return
        key = _key(message["id"])
        method = self.server_requests.pop(key, None)
        if method is None:
            again = key in self.answered_server
            self.fail(
                message, "answers a server request twice" if again else "answers no request of the server"
            )
            return
        self.answered_server.add(key)
        if "error" in message:
            self.validate(message, self.revision, envelope_definition(self.revision, "JSONRPCErrorResponse"))
            return
        if self.schemas:
            self.validate(message, self.revision, envelope_definition(self.revision, "JSONRPCResultResponse"))
            self.validate(message["result"], self.revision, result_definition(self.revision, method))

"""The exception hierarchy.

Every error that ``trio_mcp`` raises on purpose is a subclass of `MCPError`.
This module imports no Trio: the pure protocol core raises these types too.
`RequestTimeout`, which must also be a `trio.TooSlowError`, lives with the
Trio edge and is re-exported beside these. `__all__` is what ``trio_mcp``
exports; the errors of a login (`AuthorizationFailed`, `RedirectError`,
`StorageError`) are defined here too, with the others, and exported by
``trio_mcp.auth``; so are those of MCP Apps (`UIResourceError`,
`AppCallRefused`), exported by ``trio_mcp.extensions.apps``.
"""

from __future__ import annotations

from typing import Any

from ._public import fixup_module_metadata

__all__ = [
    "AuthRequired",
    "ConfigError",
    "ConnectionFailed",
    "HTTPError",
    "InputRequestFailed",
    "MCPError",
    "MessageTooLarge",
    "NotSupported",
    "OutputValidationError",
    "ProtocolError",
    "RpcError",
    "ServerBusy",
    "ServerGone",
    "SessionExpired",
    "SpawnFailed",
    "TaskCancelled",
    "TaskError",
    "TaskFailed",
    "TaskGone",
    "TransportClosed",
    "TrioMCPInternalError",
    "UnknownName",
    "VersionMismatch",
]


class MCPError(Exception):
    """Base class of every error ``trio_mcp`` raises on purpose.

    Catch this to handle every failure of the library at once. Errors that are
    not subclasses of it are bugs (please report them) or come from your own
    callbacks.

    Attributes:
        entry: The name of the configuration entry the error is about, when
            a `ServerGroup` raised it for one of its servers (``"files"``),
            else `None`. The text then begins with the entry's name
            (``server 'files': ...``), so that a log tells apart two entries
            that run the same command.
    """

    entry: str | None = None

    def __str__(self) -> str:
        text = super().__str__()
        entry = self.entry
        if entry is not None and not text.startswith(f"server {entry!r}"):
            text = f"server {entry!r}: {text}"
        return text


def name_entry(error: BaseException, entry: str) -> None:
    """Say that ``error`` is about the group's server ``entry`` (an error that names one already keeps it)."""
    if isinstance(error, MCPError) and error.entry is None:
        error.entry = entry


class SpawnFailed(MCPError):
    """The server command could not be started.

    Raised when an opener (`open_client`, `open_session`, ...) starts a
    `ProcessTarget`: the executable does not exist or is not executable, the
    working directory is missing, or the command, an argument, or an
    environment key or value contains a NUL byte (refused before any system
    call). Nothing is left running.

    Attributes:
        command: The command that was asked for, as given.
    """

    def __init__(self, message: str = "cannot start the server", *, command: str = "") -> None:
        super().__init__(message)
        self.command = command


class ServerGone(MCPError):
    """The server process died, or broke its end of the connection.

    Every request outstanding at that moment fails with this error at once,
    and so does every later request, without writing anything.

    Attributes:
        exit_code: The process's exit status when it exited on its own, else
            `None`.
        signal: The number of the signal that ended it, else `None`.
        stderr_tail: The last lines the server wrote to stderr (a bounded
            tail, at most a few KiB), often the best clue to why it died.
        server: Who it was, as the messages name it: the command line,
            shortened, and the process id, e.g.
            ``server 'node index.js --stdio' (pid 4242)``.
        command: The server's command, as given (``""`` when not a process).
        arguments: Its arguments, as given.
        pid: Its process id, or `None`.
        previous: When the server was started twice while connecting (it
            died on the ``server/discover`` probe, see `open_stdio_client`),
            the error of its first death; else `None`.
    """

    def __init__(
        self,
        message: str = "the server is gone",
        *,
        exit_code: int | None = None,
        signal: int | None = None,
        stderr_tail: str = "",
        server: str = "",
        command: str = "",
        arguments: tuple[str, ...] = (),
        pid: int | None = None,
        previous: ServerGone | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.signal = signal
        self.stderr_tail = stderr_tail
        self.server = server
        self.command = command
        self.arguments = arguments
        self.pid = pid
        self.previous = previous

    def __str__(self) -> str:
        text = super().__str__()
        if self.stderr_tail:
            tail = self.stderr_tail.rstrip("\n")
            lines = tail.splitlines()[-5:]
            text += "\nlast stderr lines:\n  " + "\n  ".join(lines)
        return text


class TransportClosed(MCPError):
    """The connection was closed by its owner.

    Raised for every request that was in flight when `aclose()
    <Session.aclose>` ran, and for everything attempted afterwards.
    """


class RpcError(MCPError):
    """The server answered a request with a JSON-RPC error.

    The connection is fine: only this request failed.

    Attributes:
        code: The JSON-RPC error code (for example ``-32601``, method not
            found, or ``-32602``, invalid params).
        message: The server's short description of the error.
        data: The error's optional ``data`` member, as decoded JSON, or
            `None`.
    """

    def __init__(self, code: int = -32603, message: str = "", data: Any = None) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class TaskError(MCPError):
    """A task (a tool call the server runs in the background) did not give its result.

    The base of `TaskFailed`, `TaskCancelled` and `TaskGone`. The connection
    is fine: only this task is over.

    Attributes:
        task_id: The server's identifier of the task.
    """

    def __init__(self, message: str = "the task did not give its result", *, task_id: str = "") -> None:
        super().__init__(message)
        self.task_id = task_id


class TaskFailed(TaskError, RpcError):
    """The task ended ``failed``: its error, as an `RpcError` would carry it.

    A tool that ran and reported failure (``isError``) is not this: its
    result is returned, as `Client.call_tool` returns it.

    Attributes:
        task_id: The server's identifier of the task.
        code: The JSON-RPC error code the server gave (``-32603`` when it gave none).
        message: The server's description of the failure.
        data: The error's ``data`` member, or `None`.
    """

    def __init__(self, code: int = -32603, message: str = "", data: Any = None, *, task_id: str = "") -> None:
        RpcError.__init__(self, code, message, data)
        self.task_id = task_id
        self.args = (f"task {task_id} failed: server error {code}: {message}",)


class TaskCancelled(TaskError):
    """The task was cancelled (by `ToolTask.cancel`, another client, or the server)."""


class TaskGone(TaskError):
    """The server no longer knows the task: it expired (its ``ttl``), or the id was never its own."""


class ProtocolError(MCPError):
    """The server's answer to a request broke the JSON-RPC protocol.

    For example a response with both ``result`` and ``error``, a ``result``
    that is not an object, or an error whose ``code`` is not an integer. Only
    the request it answered fails; the connection keeps working.
    """


class MessageTooLarge(ProtocolError):
    """The server's answer was longer than ``max_message_bytes``.

    The line was discarded as it streamed in (it was never held whole in
    memory). Raised for the request whose id could be recovered from the
    line; the connection keeps working.

    Attributes:
        size: The length of the discarded line, in bytes.
        limit: The ``max_message_bytes`` in force.
    """

    def __init__(self, message: str = "message too large", *, size: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class VersionMismatch(MCPError):
    """The server and the client share no protocol version.

    Raised when the client connects: the server answered ``initialize`` with
    a revision the client does not speak, listed only unknown versions, or
    (with ``protocol`` pinned to one era) turned out to speak only the other
    era. `open_stdio_client` closes the server as the error leaves its
    block; after `open_client`, closing the transport is yours.

    Attributes:
        offered: The versions the client offered, newest first.
        answered: The versions the server named, as it sent them (possibly
            empty when it only refused).
    """

    def __init__(
        self,
        message: str = "no common protocol version",
        *,
        offered: tuple[str, ...] = (),
        answered: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.offered = offered
        self.answered = answered


class NotSupported(MCPError):
    """The negotiated protocol era has no such method.

    For example `Client.ping` against a 2026-07-28 server (the modern era
    dropped ``ping``), or `Client.listen` against an initialize-era server.
    Nothing was sent; the connection is fine.

    Attributes:
        method: The JSON-RPC method that was asked for.
        era: ``"modern"`` or ``"legacy"``: the negotiated era.
    """

    def __init__(self, message: str = "not supported", *, method: str = "", era: str = "") -> None:
        super().__init__(message)
        self.method = method
        self.era = era


class InputRequestFailed(MCPError):
    """The server asked for input the client could not give.

    In the 2026-07-28 era, a tool call, prompt or resource read answered
    with ``input_required`` is retried after the hooks (``on_elicitation``,
    ``on_sampling``, ``on_roots``) answer every input request. This error
    ends such an operation when an input request has no hook, names an
    unknown method, asks for something not declared, when a hook raises
    (the hook's exception is the ``__cause__``), or when the server keeps
    asking past ``max_rounds``. Nothing is left pending on the server: in
    this era it keeps no state between rounds.

    Attributes:
        method: The input request's method (for example
            ``"elicitation/create"``), or ``""`` when the rounds ran out.
        key: The server's key for the input request, or ``""``.
    """

    def __init__(self, message: str = "input request failed", *, method: str = "", key: str = "") -> None:
        super().__init__(message)
        self.method = method
        self.key = key


class OutputValidationError(MCPError):
    """A tool's structured output does not match the ``outputSchema`` it declared.

    Raised by `Client.call_tool` in the ``"strict"`` ``validate_output`` mode
    (the default, ``"warn"``, reports the same through ``on_log``), when the
    result's ``structuredContent`` breaks the tool's schema, or is missing
    although the tool declared one. Results with ``isError`` set are never
    checked. The result is kept on the error: the tool did run.

    Attributes:
        tool: The tool's name.
        path: Where the value breaks the schema, as a JSON path (``"$"`` for
            the whole value, ``"$.items[2].price"`` deeper down).
        reason: What is wrong there, in the validator's words.
        result: The `CallToolResult`, as it came.
    """

    def __init__(
        self,
        message: str = "structured output does not match the output schema",
        *,
        tool: str = "",
        path: str = "$",
        reason: str = "",
        result: Any = None,
    ) -> None:
        super().__init__(message)
        self.tool = tool
        self.path = path
        self.reason = reason
        self.result = result


class HTTPError(MCPError):
    """An HTTP exchange with a remote server gave no MCP answer.

    Raised for one request over HTTP (`open_http_client`) when the server
    answered with something that is not an MCP message: an error status
    without a JSON-RPC error in its body, a redirect that is not followed,
    an unexpected content type, no body at all. A JSON-RPC error in the body
    of an error status is an `RpcError` instead. Only this request failed;
    the connection keeps working. The subclasses name the cases an
    application may act on.

    Attributes:
        url: The URL of the request.
        status: The HTTP status code, or `None` when no response came
            (`ConnectionFailed`).
        headers: The response's headers (lower-case names), or an empty dict.
        body: The start of the response's body (at most 1 KiB, decoded
            leniently), or ``""``.
    """

    def __init__(
        self,
        message: str = "HTTP request failed",
        *,
        url: str = "",
        status: int | None = None,
        headers: dict[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.headers = headers if headers is not None else {}
        self.body = body


class ConnectionFailed(HTTPError):
    """No answer came over HTTP: the connection was refused or reset, TLS
    failed, or the response stream broke (or ended) before the answer.

    ``status`` is the status of a response that was cut short, else `None`;
    the cause (``__cause__``) is the underlying network error, if any. The
    request may or may not have run on the server.
    """


class AuthRequired(HTTPError):
    """The server refused the request for lack of (sufficient) credentials: HTTP 401, or 403 with a challenge.

    It carries what the server's ``WWW-Authenticate`` challenge says, so that
    an application can run its own authorization flow (OAuth 2.1 with the
    protected resource metadata of RFC 9728, for example) and connect again
    with an ``auth`` or ``headers`` option.

    Attributes:
        www_authenticate: The raw ``WWW-Authenticate`` header, or ``""``.
        scheme: The challenge's scheme, e.g. ``"Bearer"``, or ``""``.
        params: The challenge's parameters (lower-case names), e.g.
            ``{"resource_metadata": "...", "scope": "files:read"}``.
        resource_metadata: The URL of the server's protected resource
            metadata, when the challenge gives one, else `None`.
        scope: The scope the challenge asks for, or `None`.
        error: The challenge's ``error`` (``"invalid_token"``,
            ``"insufficient_scope"``), or `None`.
    """

    def __init__(
        self,
        message: str = "authorization required",
        *,
        url: str = "",
        status: int | None = None,
        headers: dict[str, str] | None = None,
        body: str = "",
        www_authenticate: str = "",
        scheme: str = "",
        params: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, url=url, status=status, headers=headers, body=body)
        self.www_authenticate = www_authenticate
        self.scheme = scheme
        self.params = params if params is not None else {}
        self.resource_metadata = self.params.get("resource_metadata")
        self.scope = self.params.get("scope")
        self.error = self.params.get("error")


class ServerBusy(HTTPError):
    """The server asked to be left alone for a while: HTTP 429 or 503.

    Nothing ran on the server; send the request again after `retry_after`
    seconds (with a bound of your own).

    Attributes:
        retry_after: The delay the server asked for (its ``Retry-After``
            header, in seconds or as a date), or `None` when it named none.
    """

    def __init__(
        self,
        message: str = "server busy",
        *,
        url: str = "",
        status: int | None = None,
        headers: dict[str, str] | None = None,
        body: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, url=url, status=status, headers=headers, body=body)
        self.retry_after = retry_after


class SessionExpired(HTTPError):
    """The server forgot the HTTP session (initialize era), and a new one did not help.

    The transport opens a new session once when the server answers 404 (or
    another "unknown session" error) to a request of a live session; this is
    raised when that fails too.
    """


class ConfigError(MCPError):
    """A configuration file, or one entry in it, is wrong.

    The message names the file, the server and the field, and never shows an
    expanded value (it may be a secret).

    Attributes:
        file: The file the error is in, or ``None`` for a dict or JSON text.
        server: The server entry at fault, or ``None`` when the whole file is.
        field: The field at fault (``"args"``, ``"env.TOKEN"``), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        server: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.server = server
        self.field = field


class ServerCardError(MCPError):
    """A server catalog or a server card could not be read or used (experimental).

    Raised by `trio_mcp.server_cards`, whose format is still a draft: a
    document that is not there, not JSON, too large, of the wrong media
    type, redirected to another origin, or broken against the draft; a
    catalog entry that points to another origin (unless allowed) or back at
    the catalog; a remote whose transport is unknown or whose URL template
    cannot be filled in. A card is advisory: this error never says anything
    about whether a server may be trusted. A network failure is a
    `~trio_mcp.ConnectionFailed` instead. The message never shows a header value or a
    variable's value (they may be secrets).

    Attributes:
        url: The document's URL as messages show it (no user info, no
            query), or ``""``.
        reason: A short, stable name for the case: ``"status"``,
            ``"no_catalog"``, ``"content_type"``, ``"not_json"``,
            ``"too_large"``, ``"too_many"``, ``"redirect"``, ``"off_origin"``,
            ``"loop"``, ``"insecure"``, ``"timeout"``, ``"invalid"``,
            ``"transport"``, ``"no_remote"``, ``"variable"``, ``"header"``.
        status: The HTTP status of the response at fault, or `None`.
        field: Where in the document the fault is, as a JSON path
            (``"$.remotes[0].type"``), or `None`.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        url: str = "",
        status: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.url = url
        self.status = status
        self.field = field


class UnknownName(MCPError, LookupError):
    """A group has no server, tool or prompt by that name.

    Attributes:
        name: The name asked for.
        kind: ``"server"``, ``"tool"`` or ``"prompt"``.
    """

    def __init__(self, message: str, *, name: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.name = name
        self.kind = kind


class UIResourceError(MCPError):
    """An MCP Apps UI resource cannot be rendered: not a ``ui://`` URI, not
    ``text/html;profile=mcp-app``, no content, or content that is not HTML text.

    Attributes:
        uri: The resource's URI, as the server gave it.
    """

    def __init__(self, message: str, *, uri: str = "") -> None:
        super().__init__(message)
        self.uri = uri


class AppCallRefused(MCPError):
    """A view asked for something the host must refuse: a tool whose
    visibility lacks ``"app"``, a tool of another server, or a method views
    may not use.

    Attributes:
        tool: The tool's name (``""`` when the refusal is not about a tool).
        reason: Why, in a few words.
    """

    def __init__(self, message: str, *, tool: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.tool = tool
        self.reason = reason


class AuthorizationFailed(MCPError):
    """The authorization flow could not obtain a token: the server or the user refused, or broke a rule.

    Raised for the request that needed the token; the connection keeps
    working, and the next request tries again. The message says what went
    wrong; it never holds a token, a code, a secret or a ``state``.

    Attributes:
        reason: A short, stable name for the case: ``"metadata"``,
            ``"issuer_mismatch"``, ``"resource_mismatch"``, ``"pkce"``,
            ``"insecure_endpoint"``, ``"state_mismatch"``, ``"iss_mismatch"``,
            ``"authorization_denied"``, ``"registration"``, ``"token"``,
            ``"invalid_grant"``, ``"step_up_limit"``, ``"no_redirect"``,
            ``"no_key"``, ``"timeout"`` (a request of the flow's own took
            over its ``request_timeout``), ``"dpop"`` (DPoP was asked for
            and the server refuses DPoP-bound tokens).
        error: The OAuth ``error`` code the server gave, if any.
    """

    def __init__(self, message: str, *, reason: str, error: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.error = error


class RedirectError(MCPError):
    """The user's part of a login could not be done.

    The authorization URL was refused (not ``https`` nor loopback ``http``),
    the listener could not be bound, or the redirected URL was never given
    (end of input). The message never holds a code or a token.
    """


class StorageError(MCPError):
    """The credentials file cannot be used safely: its directory or file is
    owned by another user, is not a regular file or directory, or cannot be
    read or written (the message names the path and the reason, never a
    secret)."""


class TrioMCPInternalError(Exception):
    """A bug in trio_mcp: please report it, with the traceback.

    Deliberately not an `MCPError`, so that ``except MCPError`` never hides
    it.
    """


fixup_module_metadata("trio_mcp", {name: globals()[name] for name in __all__})

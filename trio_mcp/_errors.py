"""The exception hierarchy.

Every error that ``trio_mcp`` raises on purpose is a subclass of `MCPError`.
This module imports no Trio: the pure protocol core raises these types too.
`RequestTimeout`, which must also be a `trio.TooSlowError`, lives with the
Trio edge and is re-exported beside these.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "InputRequestFailed",
    "MCPError",
    "MessageTooLarge",
    "NotSupported",
    "OutputValidationError",
    "ProtocolError",
    "RpcError",
    "ServerGone",
    "SpawnFailed",
    "TransportClosed",
    "TrioMCPInternalError",
    "VersionMismatch",
]


class MCPError(Exception):
    """Base class of every error ``trio_mcp`` raises on purpose.

    Catch this to handle every failure of the library at once. Errors that are
    not subclasses of it are bugs (please report them) or come from your own
    callbacks.
    """


class SpawnFailed(MCPError):
    """The server command could not be started.

    Raised when the ``async with`` of `open_stdio_transport` is entered: the
    executable does not exist or is not executable, the working directory is
    missing, or the command, an argument, or an environment key or value
    contains a NUL byte (refused before any system call). A transport whose
    spawn failed raises the same error again from every later call.

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


class TrioMCPInternalError(Exception):
    """A bug in trio_mcp: please report it, with the traceback.

    Deliberately not an `MCPError`, so that ``except MCPError`` never hides
    it.
    """

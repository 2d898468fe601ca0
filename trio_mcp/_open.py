"""The openers: a session or a client over a child process, a Trio stream, or a session you have.

Each opener is an async context manager that owns what it starts: entering
connects (and, for a client, negotiates the era), leaving closes, bounded,
and nothing outlives the block. `wrap_client_stream` is the one exception:
it connects in a nursery of yours, and the client is yours to close.

This module is the only one that knows both the client and the transports:
the client talks to a `Session`, whatever carries it.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Unpack

import trio

from ._client import Client, ServerDiedOnProbe
from ._errors import ServerGone
from ._options import (
    ClientOptions,
    ConnectionOptions,
    ProcessOptions,
    SinkOptions,
    command_line,
    split_options,
)
from ._session import Session
from ._transports.process import ProcessChannel
from ._transports.stream import StreamChannel

if TYPE_CHECKING:
    import os
    from collections.abc import AsyncIterator, Mapping, Sequence

    import httpx

    from ._options import (
        ClientKwargs,
        StdioClientKwargs,
        StdioTransportKwargs,
        StreamClientKwargs,
        StreamTransportKwargs,
    )

__all__ = [
    "StdioTransport",
    "open_client",
    "open_http_client",
    "open_http_transport",
    "open_stdio_client",
    "open_stdio_transport",
    "open_stream_client",
    "open_stream_transport",
    "wrap_client_stream",
]


class StdioTransport(Session):
    """A `Session` with an MCP server that runs as a child process.

    Create it with `open_stdio_transport`, which describes the options,
    and use it as an async context manager: entering starts the process
    (and blocks until it is running), leaving closes it (see
    `Session.aclose`).
    """

    def __init__(
        self, channel: ProcessChannel, options: ConnectionOptions, sink: SinkOptions | None = None
    ) -> None:
        super().__init__(channel, options, sink)
        self._process = channel
        self.command = channel.command
        """The server command, as given."""
        self.args = channel.args
        """The server's arguments, as given."""

    @property
    def kill_grace(self) -> float:
        """Seconds the server gets to exit after its stdin is closed."""
        return self._process.kill_grace

    @kill_grace.setter
    def kill_grace(self, value: float) -> None:
        self._process.kill_grace = value

    @property
    def pid(self) -> int | None:
        """The server's process id, or `None` if it never started."""
        return self._process.pid

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (bounded)."""
        return self._process.stderr_tail


def open_stdio_transport(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    **options: Unpack[StdioTransportKwargs],
) -> StdioTransport:
    """Start an MCP server as a child process and talk JSON-RPC to it.

    Use the result as an async context manager::

        async with trio_mcp.open_stdio_transport("my-mcp-server", ["--stdio"]) as wire:
            tools = await wire.request("tools/list", {})

    Entering spawns the process and returns once it is running (it does not
    wait for the server to say anything). Leaving closes it: see
    `Session.aclose`. Nothing leaks: the process, its process group, the
    pipes and the background tasks all end with the block.

    Args:
        command: The program to run. It is executed directly, never through a
            shell, and looked up on ``PATH`` unless it contains a slash.
        args: Its arguments, each passed as one argument whatever it contains.
        **options: Options of the process (`ProcessOptions`: ``env``,
            ``inherit_env``, ``cwd``, ``on_stderr``, ``kill_grace``,
            ``stderr_tail_bytes``), of the connection (`ConnectionOptions`:
            ``on_log``, ``request_timeout``, ``max_message_bytes``,
            ``notification_buffer``, ``on_wire``) and of a session used
            without a client (`SinkOptions`: ``on_notification``,
            ``on_request``), each described with its class.

    Raises:
        SpawnFailed: On entering, when the server cannot be started.
        TypeError: An unknown option, or an argument of the wrong type.
        ValueError: An option out of its range.
    """
    connection, sink, process = split_options(
        "open_stdio_transport", options, ConnectionOptions, SinkOptions, ProcessOptions
    )
    program, arguments = command_line(command, args)
    return _stdio_transport(program, arguments, connection, process, sink)


def _stdio_transport(
    program: str,
    arguments: tuple[str, ...],
    connection: ConnectionOptions,
    process: ProcessOptions,
    sink: SinkOptions | None = None,
) -> StdioTransport:
    """A `StdioTransport` from options already checked."""
    channel = ProcessChannel(program, arguments, process, connection.max_message_bytes)
    return StdioTransport(channel, connection, sink)


def open_stream_transport(
    stream: trio.abc.Stream, *, name: str | None = None, **options: Unpack[StreamTransportKwargs]
) -> Session:
    """Talk JSON-RPC, one message per line, over any Trio byte stream.

    MCP over a socket, an SSH channel, a pair of pipes
    (`trio.StapledStream`), or `trio.testing.memory_stream_pair` in a test.
    Use the result as an async context manager; the session owns the stream
    from then on and closes it as the block ends.

    Args:
        stream: The stream to the server.
        name: How messages name the server, as ``server 'NAME'``
            (default: by the stream's type).
        **options: `ConnectionOptions` and `SinkOptions`, as for
            `open_stdio_transport`.
    """
    connection, sink = split_options("open_stream_transport", options, ConnectionOptions, SinkOptions)
    return Session(StreamChannel(stream, connection.max_message_bytes, name), connection, sink)


@asynccontextmanager
async def open_client(session: Session, **options: Unpack[ClientKwargs]) -> AsyncIterator[Client]:
    """Speak MCP over a session you opened; see `open_stdio_client` for the options.

    The client takes over the session's server requests and sees its
    unclaimed notifications first; leaving the block gives them back (the
    hooks and ``on_notification`` stop answering) and leaves the session
    open: it is yours to close. One client at a time. Should the server die
    on the ``server/discover`` probe, `ServerGone` is raised: only
    `open_stdio_client` can start it again.

    Raises:
        RuntimeError: The session already has a client.
        VersionMismatch: The server speaks no protocol version this client
            speaks.
    """
    (client_options,) = split_options("open_client", options, ClientOptions)
    async with _connected(session, client_options) as client:
        yield client


@asynccontextmanager
async def _connected(session: Session, options: ClientOptions) -> AsyncIterator[Client]:
    """A client attached to ``session`` and connected, detached as the block ends.

    Only `open_stdio_client` can start a server that died on the probe again;
    here that death is the error.
    """
    client = Client(session, options)
    client.attach()
    try:
        try:
            await client.connect()
        except ServerDiedOnProbe as exc:
            raise exc.gone from None
        yield client
    finally:
        client.detach()


def twice_dead(second: ServerGone, first: ServerGone) -> ServerGone:
    """The error of a server that died on the probe, was started again, and died again."""
    # First lines only: the stderr tail follows the message on lines of its own.
    now = str(second).split("\n", 1)[0]
    then = str(first).split("\n", 1)[0]
    error = ServerGone(
        f"{now} while connecting, after a restart: the first time, {then} on the server/discover probe",
        exit_code=second.exit_code,
        signal=second.signal,
        stderr_tail=second.stderr_tail,
        server=second.server,
        command=second.command,
        arguments=second.arguments,
        pid=second.pid,
        previous=first,
    )
    error.__cause__ = second
    return error


@asynccontextmanager
async def open_stdio_client(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    **options: Unpack[StdioClientKwargs],
) -> AsyncIterator[Client]:
    """Start an MCP server and connect to it; the ``async with`` owns both.

    ::

        async with trio_mcp.open_stdio_client("my-mcp-server", ["--stdio"]) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            print(result.text)

    Entering starts the server, then picks the protocol era: with
    ``protocol="auto"`` it sends the ``server/discover`` probe; an answer
    that lists the 2026-07-28 version (or an error only 2026-07-28 servers
    send) means that era, and any other answer, or silence for
    ``probe_timeout`` seconds, means the initialize era: ``initialize``
    follows (see :doc:`eras` for the rules). A server that dies on the
    probe is started once more and sent ``initialize`` straight away.
    Leaving closes the server (stdin closed, ``kill_grace``, then signals),
    bounded, and within the caller's own deadline.

    Args:
        command: The server executable (looked up on ``PATH``).
        args: Its arguments.
        **options: Options of the process (`ProcessOptions`: ``env``,
            ``inherit_env``, ``cwd``, ``on_stderr``, ``kill_grace``,
            ``stderr_tail_bytes``), of the connection (`ConnectionOptions`:
            ``on_log``, ``request_timeout``, ``max_message_bytes``,
            ``notification_buffer``, ``on_wire``) and of the client
            (`ClientOptions`: ``protocol``, ``probe_timeout``,
            ``handshake_timeout``, ``client_info``, ``on_elicitation``,
            ``on_sampling``, ``on_roots``, ``on_notification``,
            ``log_level``, ``max_rounds``, ``input_timeout``, ``cache``,
            ``capabilities``), each described with its class.

    Raises:
        SpawnFailed: The server could not be started.
        ServerGone: It died while connecting (after a restart, if it died on
            the probe: then `ServerGone.previous` is the first death).
        VersionMismatch: It speaks no protocol version this client speaks.
        RequestTimeout: The handshake got no answer in ``handshake_timeout``.
        TypeError, ValueError: An unknown option, or a bad value.
    """
    connection, process, client_options = split_options(
        "open_stdio_client", options, ConnectionOptions, ProcessOptions, ClientOptions
    )
    program, arguments = command_line(command, args)
    first: ServerGone | None = None
    for attempt in range(2):
        transport = _stdio_transport(program, arguments, connection, process)
        async with transport:
            client = Client(transport, client_options)
            client.attach()
            try:
                await client.connect(restarted=attempt == 1)
            except ServerDiedOnProbe as exc:
                first = exc.gone
                transport.log(f"{transport.name} died on the server/discover probe; starting it again")
                continue
            except ServerGone as exc:
                if first is not None:
                    raise twice_dead(exc, first) from None
                raise
            try:
                yield client
            finally:
                client.detach()
            return
    raise AssertionError("unreachable")  # pragma: no cover


@asynccontextmanager
async def open_stream_client(
    stream: trio.abc.Stream, *, name: str | None = None, **options: Unpack[StreamClientKwargs]
) -> AsyncIterator[Client]:
    """Speak MCP over any Trio byte stream; the ``async with`` owns the connection.

    The analogue of `open_stdio_client` for a server you reach yourself: a
    socket (`trio.open_tcp_stream`), an SSH channel, or
    `trio.testing.memory_stream_pair` in a test. One JSON-RPC message per
    line, as on stdio. Leaving the block closes the stream.

    Args:
        stream: The stream to the server.
        name: How messages name the server, as ``server 'NAME'``
            (default: by the stream's type).
        **options: `ConnectionOptions` and `ClientOptions`, as for
            `open_stdio_client`.
    """
    connection, client_options = split_options(
        "open_stream_client", options, ConnectionOptions, ClientOptions
    )
    session = Session(StreamChannel(stream, connection.max_message_bytes, name), connection)
    async with session, _connected(session, client_options) as client:
        yield client


async def wrap_client_stream(
    nursery: trio.Nursery,
    stream: trio.abc.Stream,
    *,
    name: str | None = None,
    **options: Unpack[StreamClientKwargs],
) -> Client:
    """Speak MCP over a Trio stream, in a nursery of yours; returns the connected client.

    Like `open_stream_client`, for code that manages lifetimes itself (as
    trio-websocket's ``wrap_client_stream``): the connection's tasks run in
    ``nursery``, and closing is yours: ``await client.aclose()`` closes the
    stream. Cancelling ``nursery`` ends the connection too.

    Raises:
        VersionMismatch, RequestTimeout, ServerGone: As `open_stream_client`;
            the stream is closed first.
    """
    connection, client_options = split_options(
        "wrap_client_stream", options, ConnectionOptions, ClientOptions
    )
    session = Session(StreamChannel(stream, connection.max_message_bytes, name), connection)
    await session.start(nursery)
    client = Client(session, client_options)
    client.own_session()
    client.attach()
    try:
        await client.connect()
    except BaseException as exc:
        with trio.CancelScope(shield=True):
            await session.aclose()
        if isinstance(exc, ServerDiedOnProbe):
            raise exc.gone from None
        raise
    return client


# ------------------------------------------------------------------ HTTP


def _http_session(
    where: str,
    url: str,
    headers: Mapping[str, str] | None,
    auth: httpx.Auth | None,
    http_client: httpx.AsyncClient | None,
    trust_env: bool,
    connection: ConnectionOptions,
    sink: SinkOptions | None = None,
    handshake_timeout: float | None = None,
) -> Session:
    """A session over Streamable HTTP; httpx is imported here, on first use only."""
    from urllib.parse import urlsplit

    if not isinstance(url, str):
        raise TypeError(f"{where}() url must be a str, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{where}() needs an http:// or https:// URL, not {url!r}")
    try:
        from ._transports.http import HTTPChannel
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            f"{where}() needs httpx: install the http extra (pip install 'trio-mcp[http]')"
        ) from exc
    channel = HTTPChannel(
        url,
        headers=headers,
        auth=auth,
        http_client=http_client,
        max_message_bytes=connection.max_message_bytes,
        trust_env=trust_env,
        handshake_timeout=handshake_timeout,
    )
    return Session(channel, connection, sink)


def open_http_transport(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    http_client: httpx.AsyncClient | None = None,
    trust_env: bool = True,
    **options: Unpack[StreamTransportKwargs],
) -> Session:
    """Talk JSON-RPC to a remote MCP server over Streamable HTTP.

    The session-level analogue of `open_http_client` (see it for the
    arguments): use the result as an async context manager, and negotiate
    yourself, or hand it to `open_client`.
    """
    connection, sink = split_options("open_http_transport", options, ConnectionOptions, SinkOptions)
    return _http_session("open_http_transport", url, headers, auth, http_client, trust_env, connection, sink)


@asynccontextmanager
async def open_http_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    http_client: httpx.AsyncClient | None = None,
    trust_env: bool = True,
    **options: Unpack[StreamClientKwargs],
) -> AsyncIterator[Client]:
    """Connect to a remote MCP server over HTTP; the ``async with`` owns the connection.

    ::

        async with trio_mcp.open_http_client("https://example.com/mcp") as client:
            result = await client.call_tool("echo", {"text": "hi"})

    The same `Client` as `open_stdio_client` gives, over the Streamable HTTP
    transport (with the ``http`` extra: ``pip install 'trio-mcp[http]'``).
    The era is chosen as on stdio: the ``server/discover`` probe first, then
    ``initialize`` for a server of the initialize era; a server that refuses
    ``initialize`` too is tried with the HTTP+SSE transport of 2024-11-05.
    See :doc:`http` for what each HTTP answer becomes.

    No read timeout applies: a slow tool or a ``listen`` stream may stay
    silent for as long as it likes. Bound calls the Trio way, with
    `trio.fail_after` around them (or ``request_timeout``).

    Args:
        url: The server's MCP endpoint (``http://`` or ``https://``), used
            exactly as given.
        headers: Headers sent with every request, e.g.
            ``{"Authorization": "Bearer ..."}``. The protocol's own headers
            cannot be replaced.
        auth: An `httpx.Auth` for every request (GET and DELETE too): a
            token provider, an OAuth flow of yours.
        http_client: An `httpx.AsyncClient` of yours, for proxies, TLS
            settings and connection pools: used as it is and not closed
            (but one left with httpx's default 5 s timeout gets no read
            timeout instead). Without one, the client made has timeouts of
            10 s to connect, 30 s to write, none to read.
        trust_env: For the client made here (not yours): whether the
            environment's proxy settings (``HTTP_PROXY``, ``HTTPS_PROXY``,
            ``ALL_PROXY``, ``NO_PROXY``), ``SSL_CERT_FILE`` and ``.netrc``
            apply, as httpx does. Loopback URLs go through ``HTTP_PROXY``
            too unless ``NO_PROXY`` covers them.
        **options: `ConnectionOptions` and `ClientOptions`, as for
            `open_stdio_client`.

    Raises:
        ConnectionFailed: The server cannot be reached.
        AuthRequired: It wants credentials (401, or 403 with a challenge).
        HTTPError: It answered with something that is not MCP.
        VersionMismatch, RequestTimeout: As `open_stdio_client`.
        TypeError, ValueError: A bad URL, an unknown option, or a bad value.
    """
    connection, client_options = split_options("open_http_client", options, ConnectionOptions, ClientOptions)
    session = _http_session(
        "open_http_client",
        url,
        headers,
        auth,
        http_client,
        trust_env,
        connection,
        handshake_timeout=client_options.handshake_timeout,
    )
    async with session, _connected(session, client_options) as client:
        yield client

"""The openers: the one way in, from a target to a connected client or session.

`open_client` and `connect_client` make a `Client` over any target, the
first as an ``async with`` block that owns the connection, the second in a
nursery of yours (as trio-websocket's ``open_websocket`` and
``connect_websocket``); `open_session` and `connect_session` do the same for
a bare `Session` (raw JSON-RPC, no MCP handshake). All four go through one
function, `_connect`: make the target's channel, start the session, attach
the client and negotiate the era, and start a server that died on the
probe again when its target allows it.

This module is the only one that knows both the client and the transports:
the client talks to a `Session`, whatever carries it. The client's package
is imported by the first opener that makes a client, so that a program that
only opens sessions never loads it.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import attrs
import trio

from ._errors import ServerGone, TrioMCPInternalError
from ._options import ClientOptions, ConnectionOptions, SessionOptions
from ._public import publish
from ._session import RequestTimeout, Session, report, start_in
from ._targets import HTTPTarget, ProcessTarget, StreamTarget, Target, make_channel
from ._telemetry import make_session

if TYPE_CHECKING:
    import os
    from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
    from types import TracebackType

    import httpx2

    from ._channel import Channel
    from ._client import Client

__all__ = [
    "connect_client",
    "connect_session",
    "keyword_options",
    "keyword_options_async",
    "open_client",
    "open_http_client",
    "open_session",
    "open_stdio_client",
]


_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Misplaced:
    """Tells a caller how to pass the options an opener refused (see `keyword_options`).

    The opener's signature is read when a call has failed, never at import.
    """

    def __init__(self, opener: Callable[..., object], options_class: type[ConnectionOptions]) -> None:
        self.opener = opener
        self.options_class = options_class

    def error(self, args: tuple[object, ...], kwargs: dict[str, object]) -> TypeError | None:
        """The error for a call that did not bind, or `None` to let Python's own stand."""
        parameters = inspect.signature(self.opener).parameters.values()
        positional = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        known = {p.name for p in parameters}
        fields = {field.name for field in attrs.fields(self.options_class)}
        name = self.opener.__name__
        kind = self.options_class.__name__
        misplaced = {key: value for key, value in kwargs.items() if key in fields and key not in known}
        if misplaced:
            named = " and ".join(misplaced)
            given = ", ".join(f"{key}={value!r}" for key, value in misplaced.items())
            what = f"is a {kind} field" if len(misplaced) == 1 else f"are {kind} fields"
            return TypeError(f"{name}(): {named} {what}: pass options={kind}({given})")
        if len(args) > len(positional):
            return TypeError(
                f"{name}() takes {len(positional)} positional arguments ({', '.join(positional)})"
                f" but {len(args)} were given: options are keyword-only, pass options={kind}(...)"
            )
        return None


def keyword_options(
    options_class: type[ConnectionOptions],
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """An opener (a context manager) whose misplaced options get a `TypeError` that says how to pass them.

    ``open_stdio_client("srv", request_timeout=5)`` names the options class
    (``pass options=ClientOptions(request_timeout=5)``), and options given by
    position name the keyword. Only a call that fails to bind is looked at:
    a good call costs nothing more.
    """

    def decorate(opener: Callable[_P, _R]) -> Callable[_P, _R]:
        misplaced = _Misplaced(opener, options_class)

        @functools.wraps(opener)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return opener(*args, **kwargs)
            except TypeError:
                error = misplaced.error(args, kwargs)
                if error is None:
                    raise
                raise error from None

        return wrapper

    return decorate


def keyword_options_async(
    options_class: type[ConnectionOptions],
) -> Callable[[Callable[_P, Coroutine[Any, Any, _R]]], Callable[_P, Coroutine[Any, Any, _R]]]:
    """`keyword_options` for an opener that is a coroutine function (and stays one)."""

    def decorate(opener: Callable[_P, Coroutine[Any, Any, _R]]) -> Callable[_P, Coroutine[Any, Any, _R]]:
        misplaced = _Misplaced(opener, options_class)

        @functools.wraps(opener)
        async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                call = opener(*args, **kwargs)
            except TypeError:
                error = misplaced.error(args, kwargs)
                if error is None:
                    raise
                raise error from None
            return await call

        return wrapper

    return decorate


def _channel(target: Target, options: ConnectionOptions) -> Channel:
    """A fresh channel to the server ``target`` names."""
    max_message_bytes = options.max_message_bytes
    if isinstance(target, ProcessTarget):
        from ._transports.process import ProcessChannel

        return ProcessChannel(target.command, target.args, target, max_message_bytes)
    if isinstance(target, StreamTarget):
        from ._transports.stream import StreamChannel

        return StreamChannel(target.stream, max_message_bytes, target.name)
    if isinstance(target, HTTPTarget):
        try:
            from ._transports.http import HTTPChannel
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                "an HTTPTarget needs httpx2: install the http extra (pip install 'trio-mcp[http]')"
            ) from exc
        return HTTPChannel(
            target.url,
            headers=target.headers,
            auth=target.auth,
            http_client=target.http_client,
            max_message_bytes=max_message_bytes,
            trust_env=target.trust_env,
            handshake_timeout=options.handshake_timeout if isinstance(options, ClientOptions) else None,
        )
    if not isinstance(target, Target):
        raise TypeError(
            f"the target must be a ProcessTarget, HTTPTarget or StreamTarget, not {type(target).__name__}"
        )
    return make_channel(target, max_message_bytes)


class _Running:
    """A session being started: in a nursery of the caller's, or in its own ``async with`` block."""

    def __init__(self, nursery: trio.Nursery | None) -> None:
        self.nursery = nursery

    async def start(self, session: Session) -> None:
        if self.nursery is None:
            await session.__aenter__()
        else:
            await start_in(session, self.nursery)

    async def stop(self, session: Session, exc: BaseException | None) -> bool:
        """Close ``session``, bounded; returns whether its block swallowed ``exc``."""
        if self.nursery is None:
            tb: TracebackType | None = exc.__traceback__ if exc is not None else None
            return await session.__aexit__(type(exc) if exc is not None else None, exc, tb)
        with trio.CancelScope(shield=True):
            await session.aclose()
        return False


async def _connect(
    target: Target, options: ConnectionOptions, running: _Running, *, handshake_too: bool
) -> tuple[Session, Client | None]:
    """The one way in: the session over ``target``, started, and (``handshake_too``) its client, connected.

    A server that dies on the ``server/discover`` probe is started once
    more, and sent ``initialize`` at once, when its target allows it
    (`Target.restart_after_probe_death`); otherwise, and after a second
    death, `ServerGone` is raised. On any failure, what was started is
    closed first.
    """
    if not handshake_too:
        session = make_session(_channel(target, options), options, target)
        await running.start(session)
        return session, None
    assert isinstance(options, ClientOptions)
    first: ServerGone | None = None
    for attempt in range(2):
        session = make_session(_channel(target, options), options, target)
        await running.start(session)
        try:
            # Once the server is starting, so that the import overlaps with
            # its start-up, and before the handshake, so that none of its
            # budgets pays for it.
            from ._client import handshake, make_client

            client = make_client(session, options)
            await handshake(client, restarted=attempt == 1)
        except BaseException as exc:
            error = _connect_error(exc, first)
            if isinstance(error, _Restart) and attempt == 0 and target.restart_after_probe_death:
                first = error.gone
                report(session, f"{session.name} died on the server/discover probe; starting it again")
                await running.stop(session, None)
                continue
            if isinstance(error, _Restart):
                error = error.gone
            if isinstance(error, RequestTimeout):
                # A server that never answered the handshake has nothing to
                # flush: no grace, or the handshake's budget would cost more.
                with trio.CancelScope(shield=True, deadline=trio.current_time()):
                    await session.aclose()
            if await running.stop(session, error):  # pragma: no cover - only a bug gets here
                raise TrioMCPInternalError(f"the connection to {session.name} swallowed {error!r}") from error
            if error is exc:
                raise
            raise error from None
        return session, client
    raise AssertionError("unreachable")  # pragma: no cover


class _Restart(Exception):
    """The server died on the probe: start it again, if its target allows it."""

    def __init__(self, gone: ServerGone) -> None:
        super().__init__(str(gone))
        self.gone = gone


def _connect_error(exc: BaseException, first: ServerGone | None) -> BaseException:
    """What a failed handshake raises: `_Restart` for a death on the probe, the twice-dead error..."""
    from ._client import ServerDiedOnProbe

    if isinstance(exc, ServerDiedOnProbe):
        return _Restart(exc.gone)
    if isinstance(exc, ServerGone) and first is not None:
        return _twice_dead(exc, first)
    return exc


def _twice_dead(second: ServerGone, first: ServerGone) -> ServerGone:
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
async def _owned(session: Session) -> AsyncIterator[None]:
    """The rest of a session's ``async with`` block, once `_connect` has entered it."""
    try:
        yield
    except BaseException as exc:
        if not await session.__aexit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        await session.__aexit__(None, None, None)


@keyword_options(ClientOptions)
@asynccontextmanager
async def open_client(target: Target, *, options: ClientOptions | None = None) -> AsyncIterator[Client]:
    """Connect to the server ``target`` names; the ``async with`` block owns the connection.

    ::

        target = trio_mcp.ProcessTarget("my-mcp-server", ["--stdio"])
        async with trio_mcp.open_client(target) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            print(result.text)

    Entering starts the server (or connects to it), then picks the protocol
    era: with ``protocol="auto"`` it sends the ``server/discover`` probe; an
    answer that lists the 2026-07-28 version (or an error only 2026-07-28
    servers send) means that era, and any other answer, or silence for
    ``probe_timeout`` seconds, means the initialize era: ``initialize``
    follows (see :doc:`eras`). A server that dies on the probe is started
    once more and sent ``initialize`` straight away, when its target allows
    it (`ProcessTarget.restart_after_probe_death`). Leaving closes the
    connection, bounded, and within the caller's own deadline: for a
    process, stdin closed, ``kill_grace``, then signals.

    Args:
        target: Where the server is: a `ProcessTarget`, an `HTTPTarget` or
            a `StreamTarget`.
        options: The client's options (`ClientOptions`); the defaults
            without one.

    Raises:
        SpawnFailed: The server could not be started.
        ServerGone: It died while connecting (after a restart, if it died on
            the probe: then `ServerGone.previous` is the first death).
        ConnectionFailed, AuthRequired, HTTPError: A URL that cannot be
            reached, wants credentials, or does not speak MCP.
        VersionMismatch: It speaks no protocol version this client speaks.
        RequestTimeout: The handshake got no answer in ``handshake_timeout``.
        TypeError: ``target`` or ``options`` is of the wrong type.
    """
    options = _client_options(options)
    session, client = await _connect(target, options, _Running(None), handshake_too=True)
    assert client is not None
    from ._client import release  # loaded by _connect, once the server was starting

    async with _owned(session):
        try:
            yield client
        finally:
            release(client)


@keyword_options_async(ClientOptions)
async def connect_client(
    nursery: trio.Nursery, target: Target, *, options: ClientOptions | None = None
) -> Client:
    """Connect to the server ``target`` names, in a nursery of yours; returns the connected client.

    Like `open_client`, for code that manages lifetimes itself: the
    connection's tasks run in ``nursery``, and closing is yours: ``await
    client.aclose()``. Cancelling ``nursery`` ends the connection too.

    Raises:
        SpawnFailed, ServerGone, VersionMismatch, RequestTimeout, HTTPError:
            As `open_client`; whatever was started is closed first.
    """
    options = _client_options(options)
    _, client = await _connect(target, options, _Running(nursery), handshake_too=True)
    assert client is not None
    return client


@keyword_options(SessionOptions)
@asynccontextmanager
async def open_session(target: Target, *, options: SessionOptions | None = None) -> AsyncIterator[Session]:
    """A bare JSON-RPC session with the server ``target`` names; the ``async with`` block owns it.

    ::

        async with trio_mcp.open_session(trio_mcp.ProcessTarget("my-mcp-server")) as session:
            result = await session.request("tools/list", {})

    No MCP handshake: the session carries what you send (the protocol's own
    negotiation included, should you want to run it yourself). Entering
    starts the server (or connects) and returns once it runs; leaving closes
    it, as for `open_client` (see `Session.aclose`).

    Raises:
        SpawnFailed: The server could not be started.
        TypeError: ``target`` or ``options`` is of the wrong type.
    """
    options = _session_options(options)
    session, _ = await _connect(target, options, _Running(None), handshake_too=False)
    async with _owned(session):
        yield session


@keyword_options_async(SessionOptions)
async def connect_session(
    nursery: trio.Nursery, target: Target, *, options: SessionOptions | None = None
) -> Session:
    """A bare JSON-RPC session, in a nursery of yours; `Session.aclose` is yours to call.

    As `open_session`, with the session's tasks in ``nursery`` (cancelling
    it ends the session too).
    """
    options = _session_options(options)
    session, _ = await _connect(target, options, _Running(nursery), handshake_too=False)
    return session


@keyword_options(ClientOptions)
@asynccontextmanager
async def open_stdio_client(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    options: ClientOptions | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> AsyncIterator[Client]:
    """Start ``command`` and connect to it: ``open_client(ProcessTarget(command, args, env=env, cwd=cwd), options=options)``.

    ::

        async with trio_mcp.open_stdio_client("my-mcp-server", ["--stdio"], env={"TOKEN": token}) as client:
            ...

    A shorthand for the common case: ``env`` and ``cwd`` are those of
    `ProcessTarget`; build one for its other parameters (``inherit_env``,
    ``kill_grace``, ``on_stderr``...).
    """
    async with open_client(ProcessTarget(command, args, env=env, cwd=cwd), options=options) as client:
        yield client


@keyword_options(ClientOptions)
@asynccontextmanager
async def open_http_client(
    url: str,
    *,
    options: ClientOptions | None = None,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[Client]:
    """Connect to a remote server: ``open_client(HTTPTarget(url, headers=headers, auth=auth), options=options)``.

    ::

        async with trio_mcp.open_http_client(
            "https://example.com/mcp", auth=trio_mcp.auth.OAuth(...)
        ) as client:
            ...

    A shorthand for the common case: ``headers`` and ``auth`` are those of
    `HTTPTarget`; build one for its other parameters (``http_client``,
    ``trust_env``).
    """
    async with open_client(HTTPTarget(url, headers=headers, auth=auth), options=options) as client:
        yield client


def _client_options(options: ClientOptions | None) -> ClientOptions:
    if options is None:
        return ClientOptions()
    if not isinstance(options, ClientOptions):
        raise TypeError(f"options must be a ClientOptions, not {type(options).__name__}")
    return options


def _session_options(options: SessionOptions | None) -> SessionOptions:
    if options is None:
        return SessionOptions()
    if not isinstance(options, SessionOptions):
        raise TypeError(f"options must be a SessionOptions, not {type(options).__name__}")
    return options


publish(globals())

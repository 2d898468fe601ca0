"""The user's part of a login: sending them to the authorization server, and back.

Two `RedirectHandler` implementations:

`LoopbackRedirect`
    For a desktop or a command line on the user's own machine: it listens on
    the loopback interface (``127.0.0.1``, a port the system picks), opens
    the authorization URL in the user's browser, and waits for the one
    request the browser makes when the authorization server sends it back
    (RFC 8252 §7.3). It answers that request with a short page, and stops
    listening.

`HeadlessRedirect`
    For a machine with no browser (a server over SSH, a container): it
    prints the authorization URL, the user opens it anywhere, logs in, and
    pastes back the address the browser was sent to (the page itself fails
    to load, which is expected); the parameters are read from it.

Both check the authorization URL before anything is opened or shown: it must
be ``https``, or ``http`` to a loopback host, with no whitespace or control
characters, and the browser is started through `webbrowser` in a worker
thread, never through a shell.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import sys
import urllib.parse
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Final, TextIO

import attrs
import h11
import trio

from .._errors import RedirectError
from .._trio.nursery import reraise

if TYPE_CHECKING:
    from ._protocols import PendingRedirect

__all__ = ["HeadlessRedirect", "LoopbackRedirect", "RedirectError", "check_authorization_url"]

#: How long one connection to the loopback listener may take to send its
#: request; a browser's speculative connection that never sends is dropped.
CONNECTION_TIMEOUT: Final = 10.0
#: The largest request head the listener reads.
MAX_REQUEST: Final = 16 * 1024

_PAGE_DONE: Final = (
    b"<!doctype html><meta charset=utf-8><title>trio-mcp</title>"
    b"<p>The authorization server sent you back. You can close this window and return to the application.</p>"
)
_PAGE_WRONG: Final = (
    b"<!doctype html><meta charset=utf-8><title>trio-mcp</title>"
    b"<p>This is not the login this application is waiting for.</p>"
)


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_authorization_url(url: str) -> str:
    """Return ``url`` if it is fit to open in a browser, else raise `RedirectError`.

    Fit means: an absolute ``https`` URL with a host, or an ``http`` one
    whose host is loopback (``localhost``, ``127.0.0.0/8``, ``::1``), with
    no whitespace, control characters, or user name and password.
    """
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise RedirectError(
            "refusing to open an authorization URL that contains whitespace or control characters"
        )
    try:
        split = urllib.parse.urlsplit(url)
        host = split.hostname or ""
        split.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise RedirectError("refusing to open an authorization URL that does not parse") from None
    if not host:
        raise RedirectError("refusing to open an authorization URL without a host")
    if split.username is not None or split.password is not None:
        raise RedirectError("refusing to open an authorization URL with credentials in it")
    scheme = split.scheme.lower()
    if scheme == "https" or (scheme == "http" and _is_loopback(host)):
        return url
    raise RedirectError(
        f"refusing to open the authorization URL of {host!r}: it must be https (or http to this machine),"
        f" not {split.scheme or 'a relative URL'!r}"
    )


def _query_params(query: str) -> dict[str, str] | None:
    """The parameters of a query string, or `None` if one is repeated (an injection attempt)."""
    params: dict[str, str] = {}
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        if name in params:
            return None
        params[name] = value
    return params


def _expected_state(authorization_url: str) -> str | None:
    params = _query_params(urllib.parse.urlsplit(authorization_url).query)
    return None if params is None else params.get("state")


def _state_matches(params: Mapping[str, str], expected: str | None) -> bool:
    """Whether ``params`` answer this login: its ``state``, or a refusal that carries none.

    Some authorization servers send ``error=access_denied`` without the
    ``state`` (RFC 6749 §4.1.2.1 says they must not). On the listener's exact
    path it still ends this login, as a refusal: the flow reads nothing from
    it but the error code.
    """
    if expected is None:
        return True
    got = params.get("state")
    if got is None:
        return "error" in params and "code" not in params
    return hmac.compare_digest(got.encode(), expected.encode())


# ---------------------------------------------------------------- loopback


@attrs.define(eq=False)
class LoopbackRedirect:
    """Receive the redirect on a loopback listener, after opening the user's browser.

    Each `listen` binds a new listener on ``host`` and a port the system
    picks (or ``port``), so the redirect URI is, for example,
    ``http://127.0.0.1:53117/callback``; authorization servers accept any
    port on a loopback address for a native application (RFC 8252 §7.3).

    ``complete`` then checks the authorization URL (see
    ``check_authorization_url``), writes a line to ``output`` saying that a
    browser is being opened and the URL to visit if it does not open, opens
    it (``open_browser``, default ``webbrowser.open`` in a worker thread,
    never a shell), and waits for a ``GET`` of the exact path carrying a ``code``
    or an ``error`` and the ``state`` of the authorization URL, or an
    ``error`` without any ``state`` (a refusal some servers send so: the
    login then ends with `AuthorizationFailed`). That request
    gets a short page, the listener is closed, and its parameters are
    returned. Any other request (another path, another method, a wrong or
    missing ``state``) gets an error page and changes nothing; a connection
    that sends nothing is dropped after ten seconds.

    The wait has no limit of its own (a person is logging in): bound it with
    a cancel scope. Leaving ``listen``, by cancellation or not, closes the
    listener.

    Args:
        host: ``"127.0.0.1"`` (default) or ``"::1"``; never a non-loopback
            address.
        port: 0 (default) for one the system picks.
        path: The path of the redirect URI.
        open_browser: Called in a worker thread with the authorization URL;
            `None` to open nothing (the URL is still printed).
        output: Where the line about the browser goes; default
            ``sys.stderr``; `None` for nowhere.
    """

    host: str = "127.0.0.1"
    port: int = 0
    path: str = "/callback"
    open_browser: Callable[[str], object] | None = webbrowser.open
    output: TextIO | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if not _is_loopback(self.host) or self.host.lower() == "localhost":
            raise ValueError(
                f"the loopback redirect binds a loopback address (127.0.0.1 or ::1), not {self.host!r}"
            )
        if not self.path.startswith("/"):
            raise ValueError(f"the redirect path must start with '/', not {self.path!r}")

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[PendingRedirect]:
        """Bind the listener and yield the pending redirect; close it on exit.

        Raises:
            RedirectError: The address cannot be bound.
        """
        try:
            listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        except OSError as exc:
            raise RedirectError(f"cannot listen on {self.host} port {self.port}: {exc.strerror}") from None
        try:
            port = listeners[0].socket.getsockname()[1]
            host = f"[{self.host}]" if ":" in self.host else self.host
            pending = _LoopbackPending(
                redirect_uri=f"http://{host}:{port}{self.path}",
                path=self.path,
                listeners=listeners,
                open_browser=self.open_browser,
                output=self.output,
            )
            yield pending
        finally:
            with trio.CancelScope(shield=True):
                for listener in listeners:
                    await listener.aclose()


@attrs.define(eq=False)
class _LoopbackPending:
    redirect_uri: str
    path: str
    listeners: list[trio.SocketListener] = attrs.field(repr=False)
    open_browser: Callable[[str], object] | None = attrs.field(repr=False)
    output: TextIO | None = attrs.field(repr=False)
    _used: bool = attrs.field(default=False, repr=False)

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        check_authorization_url(authorization_url)
        if self._used:
            raise RedirectError("this listener has taken its one redirect already; listen again")
        self._used = True
        expected = _expected_state(authorization_url)
        output = self.output if self.output is not None else sys.stderr
        output.write(
            "Opening a browser to log in. If none opens, visit this URL on this machine:\n"
            f"  {authorization_url}\n"
        )
        output.flush()
        result: dict[str, str] = {}
        try:
            async with trio.open_nursery() as nursery:

                def found(params: dict[str, str]) -> None:
                    if not result:
                        result.update(params)
                        nursery.cancel_scope.cancel(reason="the redirect came back")

                for listener in self.listeners:
                    nursery.start_soon(self._accept, listener, nursery, expected, found)
                if self.open_browser is not None:
                    nursery.start_soon(self._open, authorization_url, output)
        except BaseExceptionGroup as group:
            reraise(group, None)
        # One callback only: the listener closes at once.
        with trio.CancelScope(shield=True):
            for listener in self.listeners:
                await listener.aclose()
        return result

    async def _open(self, url: str, output: TextIO) -> None:
        assert self.open_browser is not None
        # A console browser may block until it exits: the thread is abandoned
        # when the redirect comes back (or the caller gives up).
        try:
            opened = await trio.to_thread.run_sync(self.open_browser, url, abandon_on_cancel=True)
        except Exception as exc:  # the URL printed above still works
            output.write(f"(the browser could not be opened: {type(exc).__name__}; open the URL yourself)\n")
        else:
            if opened is not False:
                return
            output.write("(no browser could be opened: open the URL yourself)\n")
        output.flush()

    async def _accept(
        self,
        listener: trio.SocketListener,
        nursery: trio.Nursery,
        expected: str | None,
        found: Callable[[dict[str, str]], None],
    ) -> None:
        while True:
            stream = await listener.accept()
            nursery.start_soon(self._serve, stream, expected, found)

    async def _serve(
        self, stream: trio.SocketStream, expected: str | None, found: Callable[[dict[str, str]], None]
    ) -> None:
        async with stream:
            with trio.move_on_after(CONNECTION_TIMEOUT):
                try:
                    params = await _serve_one(stream, self.path, expected)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if params is not None:
                    found(params)


async def _serve_one(stream: trio.SocketStream, path: str, expected: str | None) -> dict[str, str] | None:
    """Read one request, answer it; the callback's parameters if it is the one awaited."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST)
    request: h11.Request | None = None
    try:
        while request is None:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(4096))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.ConnectionClosed):
                return None
    except h11.RemoteProtocolError:
        await _respond(stream, conn, 400, b"<!doctype html><p>Bad request.</p>")
        return None
    split = urllib.parse.urlsplit(request.target.decode("ascii", "replace"))
    if split.path != path:
        await _respond(stream, conn, 404, b"<!doctype html><p>Not found.</p>")
        return None
    if request.method != b"GET":
        await _respond(stream, conn, 405, b"<!doctype html><p>Method not allowed.</p>", allow=True)
        return None
    params = _query_params(split.query)
    if params is None or not ("code" in params or "error" in params) or not _state_matches(params, expected):
        await _respond(stream, conn, 400, _PAGE_WRONG)
        return None
    await _respond(stream, conn, 200, _PAGE_DONE)
    return params


async def _respond(
    stream: trio.SocketStream, conn: h11.Connection, status: int, body: bytes, allow: bool = False
) -> None:
    headers = [
        ("content-type", "text/html; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("connection", "close"),
    ]
    if allow:
        headers.append(("allow", "GET"))
    try:
        data = conn.send(h11.Response(status_code=status, headers=headers))
        data = (
            (data or b"") + (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
        )
    except h11.LocalProtocolError:
        # The request was too broken to answer over HTTP: just close.
        return
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(data)


# ---------------------------------------------------------------- headless


async def _read_stdin_line() -> str:
    # A blocking read in a worker thread, abandoned if the caller gives up.
    return await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)


@attrs.define(eq=False)
class HeadlessRedirect:
    """Print the authorization URL, and read back the URL the browser was sent to.

    For a machine without a browser. ``complete`` checks the
    authorization URL (see ``check_authorization_url``), writes it to
    ``output`` with a line saying what to do, then reads lines from
    ``read_line`` until one holds the redirect's parameters: the whole URL
    the browser ended on (``http://127.0.0.1/callback?code=...&state=...``;
    the page itself does not load, nothing listens there), or just its query
    string. A line that holds neither a ``code`` nor an ``error`` is
    answered with a hint and another line is read; the end of input raises
    `RedirectError`.

    Nothing listens, so the browser and the application may be on different
    machines. The authorization code is of no use without the PKCE verifier
    that only this process holds.

    Args:
        redirect_uri: The redirect URI to register and send (default
            ``http://127.0.0.1/callback``).
        output: Where the URL and the hints go; default ``sys.stderr``.
        read_line: An async function returning the next line, ``""`` at the
            end of input; default, a line of ``sys.stdin`` (read in a worker
            thread, abandoned on cancellation).
    """

    redirect_uri: str = "http://127.0.0.1/callback"
    output: TextIO | None = attrs.field(default=None, repr=False)
    read_line: Callable[[], Awaitable[str]] = attrs.field(default=_read_stdin_line, repr=False)

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[PendingRedirect]:
        """Yield the pending redirect (nothing is bound)."""
        await trio.lowlevel.checkpoint()
        yield _HeadlessPending(redirect_uri=self.redirect_uri, handler=self)


@attrs.define(eq=False)
class _HeadlessPending:
    redirect_uri: str
    handler: HeadlessRedirect = attrs.field(repr=False)

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        check_authorization_url(authorization_url)
        expected = _expected_state(authorization_url)
        output = self.handler.output if self.handler.output is not None else sys.stderr
        output.write(
            "To log in, open this URL in a browser:\n"
            f"  {authorization_url}\n"
            "then paste here the address the browser is sent to at the end "
            f"(it starts with {self.redirect_uri}; the page itself does not load):\n"
        )
        output.flush()
        while True:
            line = await self.handler.read_line()
            if not line:
                raise RedirectError("no redirected URL was given (end of input)")
            text = line.strip()
            if not text:
                continue
            params = _params_from_pasted(text)
            if params is None:
                output.write(
                    "That holds no 'code' (nor 'error'): paste the whole address from the browser.\n"
                )
            elif not _state_matches(params, expected):
                output.write("That address is from another login (its state differs): paste this login's.\n")
            else:
                return params
            output.flush()


def _params_from_pasted(text: str) -> dict[str, str] | None:
    query = urllib.parse.urlsplit(text).query if "://" in text else text.lstrip("?")
    params = _query_params(query)
    if params is None or not ("code" in params or "error" in params):
        return None
    return params

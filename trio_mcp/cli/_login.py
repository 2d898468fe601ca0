"""``trio-mcp login`` and ``trio-mcp logout``: the logins kept for remote servers.

``login URL`` (or ``login --server NAME``, a remote server of a
configuration) runs the server's authorization flow once, with the user's
browser (or, with ``--headless``, by printing the URL and reading back the
address the browser ends on), and keeps the tokens in the user's file store
(`trio_mcp.auth.FileTokenStorage`), where every later command, every
configuration entry with that URL, and every application using the file
store finds them. ``--dpop`` / ``--no-dpop`` choose DPoP (by default, as
the server asks). ``logout`` revokes the tokens at the authorization server
when it offers revocation (RFC 7009), and forgets what is kept for the
server.
"""

from __future__ import annotations

import contextlib
import math
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

from ._args import (
    EXIT_CONFIG,
    EXIT_INTERRUPTED,
    EXIT_LOGIN,
    EXIT_OK,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    Options,
)
from ._console import Console
from ._failures import Failure, failure_from, first_leaf
from ._render import pretty_json
from ._run import PROBE_TIMEOUT, Budget, emit_stdout_json, flush_stdout

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from ..auth import ClientInfo, FileTokenStorage, PendingRedirect, RedirectHandler, Tokens

JSON = Any

__all__ = ["execute_login", "login_target", "resource_covers"]

#: How long a person may take to log in, in seconds (the command's
#: ``--timeout`` does not count this wait).
LOGIN_WAIT: Final = 300.0


def resource_covers(resource: str, url: str) -> bool:
    """Whether a login kept for ``resource`` is one for the server at ``url``.

    The same origin (scheme, host and port, case aside), and ``resource``'s
    path is ``url``'s path or a parent of it (RFC 9728 lets a server name its
    origin, or a prefix of its path, as its resource).
    """
    try:
        kept, asked = urllib.parse.urlsplit(resource), urllib.parse.urlsplit(url)
        kept_port, asked_port = kept.port, asked.port
    except ValueError:
        return False
    default = {"http": 80, "https": 443}
    if (
        kept.scheme.lower() != asked.scheme.lower()
        or (kept.hostname or "") != (asked.hostname or "")
        or (kept_port or default.get(kept.scheme.lower()))
        != (asked_port or default.get(asked.scheme.lower()))
    ):
        return False
    prefix = kept.path.rstrip("/")
    path = asked.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


class _LoginFailure(Exception):
    """The command cannot log in or out of what it was given; the message says why."""


def login_target(options: Options, console: Console) -> tuple[str, dict[str, str], str]:
    """The server's URL, its own headers, and how it is named (the URL, or ``--server NAME``).

    Raises:
        _LoginFailure: No URL, a server command, or an entry that is not remote.
    """
    if options.server_name is not None or options.config:
        if options.server_name is None:
            raise _LoginFailure(f"{options.command} with --config needs --server NAME")
        from ._configs import ConfigFailure, choose, load

        try:
            loaded = load(options, console)
            choose(options, loaded)
        except ConfigFailure as exc:
            raise _LoginFailure(str(exc)) from None
        spec = options.spec
        if spec is None or spec.transport == "stdio" or not spec.url:
            raise _LoginFailure(
                f"server {options.server_name!r} is started as a command, not reached by URL: it has no login"
            )
        return spec.url, dict(spec.headers), f"--server {options.server_name}"
    if options.url is None:
        if options.demo:
            raise _LoginFailure(f"{options.command} needs the server's URL, or --server NAME")
        raise _LoginFailure(f"{options.command} applies to a server reached by URL, not to a command")
    return options.url, dict(options.headers), options.url


async def _logout(options: Options, url: str, storage: FileTokenStorage) -> list[str]:
    """Forget the logins kept for ``url``, revoking their tokens where the server offers revocation."""
    import trio

    from ..auth import OAuth

    with trio.move_on_after(options.timeout if options.timeout is not None else math.inf):
        return await OAuth(url, storage=storage).logout()
    # Out of time while revoking: the logins are forgotten all the same.
    forgotten: list[str] = []
    for resource, issuer in await storage.resources():
        if resource_covers(resource, url):
            await storage.forget(resource, issuer)
            forgotten.append(resource)
    return sorted(set(forgotten))


class _Watched:
    """The user's part of the login, watched: whether it ran, and the command's budget paused meanwhile."""

    def __init__(self, inner: RedirectHandler, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.ran = False

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[PendingRedirect]:
        async with self.inner.listen() as pending:
            yield _WatchedPending(pending, self)


class _WatchedPending:
    def __init__(self, inner: PendingRedirect, owner: _Watched) -> None:
        self.inner = inner
        self.owner = owner

    @property
    def redirect_uri(self) -> str:
        return self.inner.redirect_uri

    async def complete(self, authorization_url: str) -> Mapping[str, str]:
        import trio

        self.owner.ran = True
        # A person is logging in: the command's --timeout does not count
        # this wait, which has a bound of its own.
        self.owner.budget.pause()
        try:
            with trio.move_on_after(LOGIN_WAIT):
                return await self.inner.complete(authorization_url)
            raise Failure(EXIT_TIMEOUT, f"nobody logged in within {LOGIN_WAIT:g} s", kind="timeout")
        finally:
            self.owner.budget.resume()


class _FreshLogin:
    """The file store, but with no tokens to find: the flow logs in anew (and keeps what it gets)."""

    def __init__(self, storage: FileTokenStorage) -> None:
        self.storage = storage

    async def get_client(self, resource: str, issuer: str) -> ClientInfo | None:
        return await self.storage.get_client(resource, issuer)

    async def set_client(self, resource: str, issuer: str, client: ClientInfo) -> None:
        await self.storage.set_client(resource, issuer, client)

    async def get_tokens(self, resource: str, issuer: str, client_id: str) -> Tokens | None:
        import trio

        await trio.lowlevel.checkpoint()
        return None

    async def set_tokens(self, resource: str, issuer: str, client_id: str, tokens: Tokens) -> None:
        await self.storage.set_tokens(resource, issuer, client_id, tokens)

    async def forget(self, resource: str, issuer: str | None = None) -> None:
        await self.storage.forget(resource, issuer)


async def _kept_scopes(storage: FileTokenStorage, url: str) -> list[str]:
    """The scopes granted to the logins kept for the server at ``url``."""
    scopes: list[str] = []
    for resource, issuer in await storage.resources():
        if not resource_covers(resource, url):
            continue
        client = await storage.get_client(resource, issuer)
        tokens = None if client is None else await storage.get_tokens(resource, issuer, client.client_id)
        if tokens is not None and tokens.scope:
            scopes += tokens.scope.split()
    return scopes


async def _login(options: Options, url: str, headers: dict[str, str], storage: FileTokenStorage) -> str:
    """Log in to the server at ``url``: ``"done"``, ``"already"`` (a kept login works) or ``"none"`` (none needed)."""
    from .._open import open_client
    from .._options import ClientOptions
    from .._targets import HTTPTarget
    from ..auth import HeadlessRedirect, LoopbackRedirect, OAuth

    budget = Budget(options.timeout)
    handler: RedirectHandler = HeadlessRedirect() if options.headless else LoopbackRedirect()
    watched = _Watched(handler, budget)
    # --dpop / --no-dpop, else the configuration entry's choice, else as the server asks.
    spec = options.spec
    dpop = options.dpop if options.dpop is not None else (spec.dpop if spec is not None else None)
    if options.scope:
        # More scope: a new login, for what the kept one has and what is asked (step-up is a union).
        scope = " ".join(dict.fromkeys([*await _kept_scopes(storage, url), *options.scope.split()]))
        auth = OAuth(url, redirect=watched, storage=_FreshLogin(storage), scope=scope, dpop=dpop)
    else:
        auth = OAuth(url, redirect=watched, storage=storage, dpop=dpop)
    with budget.scope:
        budget.start()
        # The login runs inside the first request, the era probe: the probe's
        # own bound must leave the person their time (the budget is paused
        # meanwhile, and LOGIN_WAIT bounds them).
        client_options = ClientOptions(
            protocol=options.protocol,
            probe_timeout=PROBE_TIMEOUT + LOGIN_WAIT,
            handshake_timeout=None,
            request_timeout=None,
        )
        async with open_client(HTTPTarget(url, headers=headers, auth=auth), options=client_options):
            pass
    if budget.scope.cancelled_caught:
        raise Failure(EXIT_TIMEOUT, f"timed out after {options.timeout:g} s while logging in", kind="timeout")
    if watched.ran:
        return "done"
    return "already" if auth.tokens is not None else "none"


def execute_login(options: Options) -> int:
    """Run ``login`` or ``logout``; the exit status."""
    console = Console()
    try:
        url, headers, named = login_target(options, console)
        if options.command == "login" and any(name.lower() == "authorization" for name in headers):
            raise _LoginFailure(
                f"{named} is reached with an Authorization header of its own: it needs no login"
            )
    except _LoginFailure as exc:
        status = EXIT_CONFIG if options.server_name is not None else EXIT_USAGE
        return Failure(status, str(exc), kind="config" if status == EXIT_CONFIG else "usage").report(
            options, console, emit_stdout_json
        )
    import trio

    from ..auth import AuthorizationFailed, FileTokenStorage, RedirectError

    storage = FileTokenStorage()
    outcome = ""
    forgotten: list[str] = []
    try:
        if options.command == "login":
            outcome = trio.run(_login, options, url, headers, storage)
        else:
            forgotten = trio.run(_logout, options, url, storage)
    except BaseException as exc:
        leaf = first_leaf(exc)
        if isinstance(leaf, AuthorizationFailed | RedirectError):
            return Failure(EXIT_LOGIN, f"the login to {named} failed: {leaf}", kind="login").report(
                options, console, emit_stdout_json
            )
        failure = failure_from(exc, options, console, options.command)
        return EXIT_INTERRUPTED if failure is None else failure.report(options, console, emit_stdout_json)
    if options.command == "login":
        if options.json_output:
            record = {"server": url, "outcome": outcome, "storage": str(storage.path)}
            return flush_stdout(pretty_json({"login": record}) + "\n")
        text = {
            "done": f"logged in to {named}",
            "already": f"already logged in to {named} (to log in again: {PROG} logout {named} first)",
            "none": f"{named} needs no login",
        }[outcome]
        return flush_stdout(text + "\n")
    if options.json_output:
        return flush_stdout(pretty_json({"logout": {"server": url, "forgotten": forgotten}}) + "\n")
    if forgotten:
        return flush_stdout(f"logged out of {named}\n") or EXIT_OK
    console.say(f"{PROG}: no login was kept for {named}")
    return EXIT_OK

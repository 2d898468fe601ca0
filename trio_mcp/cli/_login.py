"""``trio-mcp login`` and ``trio-mcp logout``: the logins kept for remote servers.

``login URL`` (or ``login --server NAME``, a remote server of a
configuration) runs the server's authorization flow once, with the user's
browser (or, with ``--headless``, by printing the URL and reading back the
address the browser ends on), and keeps the tokens in the user's file store
(`trio_mcp.auth.FileTokenStorage`), where every later command, every
configuration entry with that URL, and every application using the file
store finds them. ``logout`` forgets what is kept for the server.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any, Final

from ._args import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG, Options
from ._console import Console
from ._render import pretty_json
from ._run import Failure, emit_stdout_json, failure_from, flush_stdout

if TYPE_CHECKING:
    from ..auth import FileTokenStorage

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
    forgotten: list[str] = []
    for resource, issuer in await storage.resources():
        if resource_covers(resource, url):
            await storage.forget(resource, issuer)
            forgotten.append(resource)
    return sorted(set(forgotten))


def execute_login(options: Options) -> int:
    """Run ``login`` or ``logout``; the exit status."""
    console = Console()
    try:
        url, _headers, named = login_target(options, console)
    except _LoginFailure as exc:
        status = EXIT_CONFIG if options.server_name is not None else EXIT_USAGE
        return Failure(status, str(exc), kind="config" if status == EXIT_CONFIG else "usage").report(
            options, console, emit_stdout_json
        )
    import trio

    from ..auth import FileTokenStorage

    storage = FileTokenStorage()
    try:
        forgotten = trio.run(_logout, options, url, storage)
    except BaseException as exc:
        failure = failure_from(exc, options, console, "logout")
        return EXIT_INTERRUPTED if failure is None else failure.report(options, console, emit_stdout_json)
    if options.json_output:
        return flush_stdout(pretty_json({"logout": {"server": url, "forgotten": forgotten}}) + "\n")
    if forgotten:
        return flush_stdout(f"logged out of {named}\n") or EXIT_OK
    console.say(f"{PROG}: no login was kept for {named}")
    return EXIT_OK

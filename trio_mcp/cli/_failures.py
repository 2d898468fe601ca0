"""How the ``trio-mcp`` command says what went wrong: one line and an exit status per failure.

`Failure` is an error of the command's own; `explain` turns an error of the
library into one (a server gone, a timeout, a refusal, a login needed, an
extra not installed...), and `failure_from` does so for whatever leaves a
command's Trio run. Every message names the server as the command line gave
it, and shows the tail of its stderr as plain text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .._errors import (
    AuthorizationFailed,
    AuthRequired,
    ConnectionFailed,
    HTTPError,
    InputRequestFailed,
    MCPError,
    NotSupported,
    ProtocolError,
    RpcError,
    ServerGone,
    SpawnFailed,
    TransportClosed,
    VersionMismatch,
)
from .._session import RequestTimeout
from ._args import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_LOGIN,
    EXIT_PROTOCOL,
    EXIT_RPC_ERROR,
    EXIT_SERVER_GONE,
    EXIT_SETUP,
    EXIT_SPAWN,
    EXIT_TIMEOUT,
    PROG,
    Options,
)
from ._render import compact, plain_stderr

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._console import Console

__all__ = [
    "EXTRA_MODULES",
    "TAIL_LINES",
    "WHAT_EXTRAS",
    "Failure",
    "command_line",
    "explain",
    "failure_from",
    "first_leaf",
    "is_interrupt",
    "login_command",
    "login_needed",
    "missing_extra",
    "server_words",
    "setup_failure",
    "tail",
    "wanted_scope",
]

JSON = Any
#: The most stderr lines of a dead server an error message shows.
TAIL_LINES: Final = 10


class Failure(Exception):
    """An error of the command's own, with its exit status and message."""

    def __init__(
        self, status: int, message: str, /, *, detail: str = "", kind: str = "", **data: JSON
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail
        self.kind = kind
        self.data = data

    def report(self, options: Options, console: Console, emit_json: Callable[[JSON], object]) -> int:
        """Say the failure: a JSON error document with ``--json``, the message (and the
        server's stderr lines) on stderr; the exit status."""
        if options.json_output:
            error: dict[str, JSON] = {"kind": self.kind, "message": self.message, "exitCode": self.status}
            error.update({key: value for key, value in self.data.items() if value is not None})
            emit_json({"error": error})
        console.error(self.message + ("; its last stderr lines:" if self.detail else ""))
        if self.detail:
            console.say(self.detail)
        return self.status


def command_line(options: Options) -> str:
    """The server's command line, shortened."""
    if options.demo:
        return "python -m trio_mcp.demo"
    if options.spec is not None:
        return options.server[0]  # its name, and its command as written in the file
    import shlex

    text = shlex.join(options.server)
    return text if len(text) <= 80 else text[:77] + "..."


def server_words(options: Options) -> str:
    if options.demo:
        return "the demo server (python -m trio_mcp.demo)"
    return f"the server {command_line(options)}"


def explain(exc: BaseException, options: Options, stage: str, *, declined: str | None = None) -> Failure:
    """The exit status and message for an error of the library.

    ``declined`` is why questions were declined without asking anyone, if
    some were (the server may keep asking them).
    """
    where = {"connecting": "while connecting", "idle": "while idle"}.get(stage, f"during {stage}")
    if isinstance(exc, SpawnFailed):
        return Failure(EXIT_SPAWN, str(exc), kind="spawn")
    if isinstance(exc, ServerGone):
        if exc.exit_code is not None:
            what = f"exited with code {exc.exit_code}"
        elif exc.signal is not None:
            what = f"was killed by signal {exc.signal}"
        else:
            what = str(exc).split("\n", 1)[0]
            prefix = f"server {options.server[0]!r} "
            what = what[len(prefix) :] if what.startswith(prefix) else what
        last = tail(exc.stderr_tail.splitlines())
        message = f"{server_words(options)} {what} {where}"
        if not last:
            message += " (it wrote nothing to stderr)"
        return Failure(
            EXIT_SERVER_GONE,
            message,
            detail="\n".join("  | " + line for line in last),
            kind="server-gone",
            serverExitCode=exc.exit_code,
            serverSignal=exc.signal,
            stderrTail=exc.stderr_tail,
        )
    if isinstance(exc, TransportClosed):
        return Failure(EXIT_SERVER_GONE, f"the connection closed {where}: {exc}", kind="server-gone")
    if isinstance(exc, RequestTimeout):
        return Failure(EXIT_TIMEOUT, f"timed out {where}: {exc}", kind="timeout")
    if isinstance(exc, RpcError):
        message = f"the server answered {stage} with error {exc.code}: {exc.message}"
        data = exc.data
        if (
            exc.code == -32021
            and isinstance(data, dict)
            and isinstance(data.get("requiredCapabilities"), dict)
        ):
            wanted = ", ".join(data["requiredCapabilities"])
            message += f" (it needs {wanted}; {PROG} offers elicitation only: no sampling, no roots)"
        elif exc.code == -32042 and isinstance(data, dict) and isinstance(data.get("elicitations"), list):
            urls = [e.get("url") for e in data["elicitations"] if isinstance(e, dict)]
            message += f" (open {', '.join(str(u) for u in urls)} and try again)"
        elif data is not None:
            message += f" (data: {compact(data, 200)})"
        return Failure(EXIT_RPC_ERROR, message, kind="rpc", code=exc.code, data=exc.data)
    if isinstance(exc, InputRequestFailed):
        if exc.method == "sampling/createMessage":
            message = (
                f"the server asked for sampling (a language model's completion) {where};"
                f" {PROG} has no model and refuses it"
            )
        elif exc.method == "roots/list":
            message = f"the server asked for roots {where}; {PROG} offers none"
        elif not exc.method and declined is not None:
            # The rounds ran out: the server asked again whatever the answer.
            message = f"the server kept asking for input after it was declined ({declined}): {exc}"
        else:
            message = f"{exc} ({where})"
        return Failure(EXIT_INPUT, message, kind="input", method=exc.method)
    if isinstance(exc, AuthRequired):
        return login_needed(exc, options)
    if isinstance(exc, HTTPError) and exc.status in (401, 403):
        # A 403 without a challenge: no login helps, or another one might.
        return Failure(
            EXIT_LOGIN,
            f"the server refused access (HTTP {exc.status}) {where}: {exc}",
            kind="login",
            httpStatus=exc.status,
        )
    if isinstance(exc, HTTPError):
        status = EXIT_SERVER_GONE if isinstance(exc, ConnectionFailed) else EXIT_PROTOCOL
        return Failure(status, f"{exc} ({where})", kind="http", httpStatus=exc.status)
    if isinstance(exc, AuthorizationFailed):
        command = login_command(options) if options.url is not None or options.spec is not None else None
        again = f"; log in again: {command}" if command else ""
        return Failure(
            EXIT_LOGIN,
            f"the login kept for the server failed {where}: {exc}{again}",
            kind="login",
            reason=exc.reason,
            loginCommand=command,
        )
    if isinstance(exc, VersionMismatch):
        return Failure(EXIT_PROTOCOL, f"no protocol version in common: {exc}", kind="version")
    if isinstance(exc, ProtocolError | NotSupported):
        return Failure(EXIT_PROTOCOL, f"protocol error {where}: {exc}", kind="protocol")
    if isinstance(exc, MCPError):  # pragma: no cover - every MCPError is handled above
        return Failure(EXIT_PROTOCOL, f"{exc} ({where})", kind="protocol")
    missing = missing_extra(exc)
    if missing is not None:
        return setup_failure(*missing)
    return Failure(EXIT_INTERNAL, f"unexpected error: {type(exc).__name__}: {exc}", kind="internal")


#: The modules of the extras, and which extra brings each.
EXTRA_MODULES: Final = {
    "httpx2": "http",
    "h11": "http",
    "cryptography": "auth",
    "jsonschema_rs": "validation",
}
#: What each extra is for, in messages.
WHAT_EXTRAS: Final = {
    "http": "a remote server (a URL)",
    "auth": "this authorization (signed client assertions, DPoP)",
    "validation": "checking structured output",
}


def missing_extra(exc: BaseException) -> tuple[str, str] | None:
    """The module and the extra missing, when ``exc`` comes of the import of an extra's module
    that failed (itself, inside a group, or as the cause or context of either)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 100:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ImportError) and current.name is not None:
            top = current.name.partition(".")[0]
            if top in EXTRA_MODULES:
                return top, EXTRA_MODULES[top]
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(inner for inner in (current.__cause__, current.__context__) if inner is not None)
    return None


def setup_failure(module: str, extra: str) -> Failure:
    """The failure for an extra that is not installed: `EXIT_SETUP`, with the command that installs it."""
    return Failure(
        EXIT_SETUP,
        f"{WHAT_EXTRAS[extra]} needs the {extra} extra, which is not installed"
        f" (no module {module!r}): pip install 'trio-mcp[{extra}]'",
        kind="setup",
        extra=extra,
        module=module,
    )


def tail(lines: Sequence[str]) -> list[str]:
    """The last `TAIL_LINES` of a server's stderr lines, as plain text (`plain_stderr`), trimmed."""
    plain = plain_stderr(lines)
    while plain and not plain[-1]:
        plain.pop()
    plain = plain[-TAIL_LINES:]
    while plain and not plain[0]:
        plain.pop(0)
    return plain


def login_command(options: Options, server: str | None = None, scope: str | None = None) -> str:
    """The command line that logs in to the server ``options`` talk to (or to their configuration's ``server``)."""
    import shlex

    if server is None and options.spec is not None:
        server = options.spec.name
    if server is not None:
        words = [PROG, "login", "--server", server]
        for path in options.config:
            words += ["--config", path]
    else:
        words = [PROG, "login", options.url or ""]
    if scope:
        words += ["--scope", scope]
    return shlex.join(words)


def wanted_scope(exc: AuthRequired) -> str | None:
    """The scope a 403 ``insufficient_scope`` asks for (a login with more scope), else `None`."""
    return exc.scope if exc.error == "insufficient_scope" and exc.scope else None


def login_needed(exc: AuthRequired, options: Options) -> Failure:
    """The one line for a server that wants a login, or refused the credentials given."""
    headers = options.spec.headers if options.spec is not None else options.headers
    from .._config.spec import shown_url

    challenge = f"HTTP {exc.status}" + (f", {exc.error}" if exc.error else "")
    if exc.resource_metadata:
        challenge += f", resource metadata at {shown_url(exc.resource_metadata)}"
    if any(name.lower() == "authorization" for name in headers):
        message = f"the server refused the Authorization header given ({challenge})"
        command = None
    else:
        scope = wanted_scope(exc)
        command = login_command(options, scope=scope)
        what = "a login with more scope" if scope else "a login"
        message = f"the server needs {what} ({challenge}): run {command}"
    return Failure(EXIT_LOGIN, message, kind="login", httpStatus=exc.status, loginCommand=command)


def first_leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def failure_from(exc: BaseException, options: Options, console: Console, stage: str) -> Failure | None:
    """What an exception out of a command's Trio run says, or `None` for Ctrl-C.

    `SystemExit` goes on; a `Failure` of the command's own is itself; any
    other error is explained (with its traceback on ``--verbose`` when it is
    a bug).
    """
    if is_interrupt(exc):
        console.end_line()
        return None
    if isinstance(exc, SystemExit):
        raise exc
    leaf = first_leaf(exc)
    if isinstance(leaf, Failure):
        return leaf
    failure = explain(leaf, options, stage)
    missing = missing_extra(exc) if failure.status == EXIT_INTERNAL else None
    if missing is not None:
        failure = setup_failure(*missing)
    if failure.status == EXIT_INTERNAL and options.verbose:
        import traceback

        traceback.print_exception(exc)
    return failure


def is_interrupt(exc: BaseException) -> bool:
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(is_interrupt(inner) for inner in exc.exceptions)
    return False

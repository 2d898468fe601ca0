"""Logins that outlive the process: `FileTokenStorage`, the file store of `TokenStorage`.

One JSON file under the user's state directory holds every login of the
user: the client registration with each authorization server, and the
tokens it was given, keyed by the protected resource (the MCP server), the
authorization server's issuer and the client. A login made once (``trio-mcp
login``, or the first connection of an application) serves every later
process until it expires or is revoked.

The file is private and never half-written:

* it lives in a directory of mode ``0700`` and has mode ``0600`` itself
  (the directory's mode is tightened when the store creates it, and a
  directory or file owned by another user is refused);
* every change writes a new file beside it, flushes it to the disk and
  renames it over the old one (``os.replace``), so a reader sees the old
  content or the new, never a mix, even if the writer is killed halfway;
* changes from several processes and tasks are serialized by an advisory
  lock (``fcntl.flock``) on a lock file next to it, and each change re-reads
  the file under the lock, so two processes that refresh at once both keep
  their entry;
* once the lock is held, the write runs shielded from cancellation: a
  rotated refresh token, once received, is never lost to a timeout. Waiting
  for the lock is cancellable.

A file that cannot be read as a store (truncated by a full disk, edited by
hand) is moved aside to ``credentials.json.corrupt`` with a warning, and
the store starts empty: the next connection logs in again instead of
failing for good.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx2
import trio

from .._core.oauth import AuthorizationFailed
from .._errors import StorageError
from ._protocols import ClientInfo, Tokens

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Generator, Iterator, Mapping

    from ._flow import OAuth

__all__ = ["FileTokenStorage", "StorageError", "default_state_dir", "stored_login"]

logger = logging.getLogger("trio_mcp.auth")

_FORMAT: Final = "trio-mcp-credentials"
_VERSION: Final = 1
_FILE_NAME: Final = "credentials.json"
_LOCK_NAME: Final = "credentials.lock"
_CORRUPT_SUFFIX: Final = ".corrupt"
# Waiting for another process's lock: short polls, growing to this.
_LOCK_POLL_MAX: Final = 0.05


def default_state_dir() -> Path:
    """The directory the file store uses by default.

    ``$XDG_STATE_HOME/trio-mcp/auth`` when ``XDG_STATE_HOME`` is set to an
    absolute path, else ``~/.local/state/trio-mcp/auth`` (the XDG Base
    Directory default).
    """
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "trio-mcp" / "auth"


def _entry_key(resource: str, issuer: str) -> str:
    return f"{resource}\n{issuer}"


def _client_to_json(client: ClientInfo) -> dict[str, Any]:
    return {
        "client_id": client.client_id,
        "client_secret": client.client_secret,
        "token_endpoint_auth_method": client.token_endpoint_auth_method,
        "redirect_uris": list(client.redirect_uris),
        "issuer": client.issuer,
        "extra": dict(client.extra),
    }


def _client_from_json(data: Any) -> ClientInfo:
    if not isinstance(data, dict):
        raise ValueError("a client is not an object")
    secret = data.get("client_secret")
    extra = data.get("extra", {})
    uris = data.get("redirect_uris", [])
    if (
        not isinstance(data.get("client_id"), str)
        or not (secret is None or isinstance(secret, str))
        or not isinstance(data.get("token_endpoint_auth_method"), str)
        or not isinstance(data.get("issuer"), str)
        or not isinstance(uris, list)
        or not all(isinstance(uri, str) for uri in uris)
        or not isinstance(extra, dict)
    ):
        raise ValueError("a client has a field of the wrong type")
    return ClientInfo(
        client_id=data["client_id"],
        client_secret=secret,
        token_endpoint_auth_method=data["token_endpoint_auth_method"],
        redirect_uris=tuple(uris),
        issuer=data["issuer"],
        extra=extra,
    )


def _tokens_to_json(tokens: Tokens) -> dict[str, Any]:
    return {
        "access_token": tokens.access_token,
        "token_type": tokens.token_type,
        "refresh_token": tokens.refresh_token,
        "scope": tokens.scope,
        "expires_at": tokens.expires_at,
        "issued_at": tokens.issued_at,
    }


def _tokens_from_json(data: Any) -> Tokens:
    if not isinstance(data, dict):
        raise ValueError("tokens are not an object")
    refresh = data.get("refresh_token")
    scope = data.get("scope")
    expires_at = data.get("expires_at")
    issued_at = data.get("issued_at")
    if (
        not isinstance(data.get("access_token"), str)
        or not isinstance(data.get("token_type"), str)
        or not (refresh is None or isinstance(refresh, str))
        or not (scope is None or isinstance(scope, str))
        or not all(
            value is None or (isinstance(value, int | float) and not isinstance(value, bool))
            for value in (expires_at, issued_at)
        )
    ):
        raise ValueError("tokens have a field of the wrong type")
    return Tokens(
        access_token=data["access_token"],
        token_type=data["token_type"],
        refresh_token=refresh,
        scope=scope,
        expires_at=expires_at,
        issued_at=issued_at,
    )


def _check_entries(document: Any) -> dict[str, dict[str, Any]]:
    """The entries of a parsed file, each checked; `ValueError` if anything is off."""
    if (
        not isinstance(document, dict)
        or document.get("format") != _FORMAT
        or document.get("version") != _VERSION
        or not isinstance(document.get("servers"), list)
    ):
        raise ValueError("not a credentials file of this version")
    entries: dict[str, dict[str, Any]] = {}
    for entry in document["servers"]:
        if not isinstance(entry, dict):
            raise ValueError("an entry is not an object")
        resource, issuer = entry.get("resource"), entry.get("issuer")
        tokens = entry.get("tokens", {})
        if not isinstance(resource, str) or not isinstance(issuer, str) or not isinstance(tokens, dict):
            raise ValueError("an entry has a field of the wrong type")
        if entry.get("client") is not None:
            _client_from_json(entry["client"])
        for value in tokens.values():
            _tokens_from_json(value)
        entries[_entry_key(resource, issuer)] = {
            "resource": resource,
            "issuer": issuer,
            "client": entry.get("client"),
            "tokens": tokens,
        }
    return entries


class FileTokenStorage:
    """Logins kept in a private file, shared by every process of the user.

    Implements `TokenStorage`: the client registration is kept per protected
    resource and issuer, the tokens per resource, issuer and client id.

    Args:
        directory: Where the file lives; default the user's state directory,
            ``$XDG_STATE_HOME/trio-mcp/auth`` (``~/.local/state/trio-mcp/auth``). Created with mode ``0700`` if missing.

    Every method is async and reads or writes the file in a worker thread;
    the writes run under a lock shared with other processes, and are
    shielded from cancellation once the lock is held (see the module's
    description). The store holds nothing in memory between calls: another
    process's login is seen at once.

    Raises:
        StorageError: From any method, when the directory or the file is
            owned by someone else, is a symlink or not a regular file, or
            an operating system call fails.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self._directory = Path(directory) if directory is not None else default_state_dir()

    def __repr__(self) -> str:
        return f"FileTokenStorage({str(self._directory)!r})"

    @property
    def path(self) -> Path:
        """The credentials file (which may not exist yet)."""
        return self._directory / _FILE_NAME

    # ------------------------------------------------------------ protocol

    async def get_client(self, resource: str, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer`` for ``resource``, or `None`."""
        entry = (await self._read()).get(_entry_key(resource, issuer))
        if entry is None or entry["client"] is None:
            return None
        return _client_from_json(entry["client"])

    async def set_client(self, resource: str, issuer: str, client: ClientInfo) -> None:
        """Keep ``client`` as the registration with ``issuer`` for ``resource``."""
        data = _client_to_json(client)

        def change(entries: dict[str, dict[str, Any]]) -> None:
            entry = entries.setdefault(
                _entry_key(resource, issuer),
                {"resource": resource, "issuer": issuer, "client": None, "tokens": {}},
            )
            entry["client"] = data

        await self._change(change)

    async def get_tokens(self, resource: str, issuer: str, client_id: str) -> Tokens | None:
        """The tokens ``issuer`` gave ``client_id`` for ``resource``, or `None`."""
        entry = (await self._read()).get(_entry_key(resource, issuer))
        if entry is None or client_id not in entry["tokens"]:
            return None
        return _tokens_from_json(entry["tokens"][client_id])

    async def set_tokens(self, resource: str, issuer: str, client_id: str, tokens: Tokens) -> None:
        """Keep ``tokens`` (replacing the client's earlier ones)."""
        data = _tokens_to_json(tokens)

        def change(entries: dict[str, dict[str, Any]]) -> None:
            entry = entries.setdefault(
                _entry_key(resource, issuer),
                {"resource": resource, "issuer": issuer, "client": None, "tokens": {}},
            )
            entry["tokens"][client_id] = data

        await self._change(change)

    async def forget(self, resource: str, issuer: str | None = None) -> None:
        """Drop what is kept for ``resource``: with every issuer, or only ``issuer``'s."""

        def change(entries: dict[str, dict[str, Any]]) -> None:
            for key, entry in list(entries.items()):
                if entry["resource"] == resource and issuer in (None, entry["issuer"]):
                    del entries[key]

        await self._change(change)

    # ------------------------------------------------------------ beyond the protocol

    async def resources(self) -> list[tuple[str, str]]:
        """The ``(resource, issuer)`` pairs that have a registration or tokens kept."""
        return [(entry["resource"], entry["issuer"]) for entry in (await self._read()).values()]

    # ------------------------------------------------------------ the file

    async def _read(self) -> dict[str, dict[str, Any]]:
        # Reading takes the lock too: a corrupt file is moved aside under it.
        result: dict[str, dict[str, Any]] = {}

        def read(entries: dict[str, dict[str, Any]]) -> None:
            result.update(entries)

        await self._locked(read, write=False)
        return result

    async def _change(self, change: Any) -> None:
        await self._locked(change, write=True)

    async def _locked(self, work: Any, *, write: bool) -> None:
        lock_fd = await trio.to_thread.run_sync(self._open_lock, write)
        if lock_fd is None:
            # Nothing was ever kept, and this is a read: nothing to create either.
            work({})
            return
        try:
            delay = 0.001
            while True:
                try:
                    fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await trio.sleep(delay)
                    delay = min(delay * 2, _LOCK_POLL_MAX)
            # The lock is ours: what follows runs to its end, whatever the
            # caller's cancel scope says, so that the file is never left
            # changed in one process's mind and not on the disk.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._update, work, write)
            await trio.lowlevel.checkpoint_if_cancelled()
        finally:
            os.close(lock_fd)  # releases the lock

    def _prepare_directory(self) -> None:
        directory = self._directory
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(directory)
        except OSError as exc:
            raise StorageError(
                f"cannot create the credentials directory {directory}: {exc.strerror}"
            ) from None
        if not stat.S_ISDIR(info.st_mode):
            raise StorageError(f"the credentials directory {directory} is not a directory")
        if info.st_uid != os.getuid():
            raise StorageError(f"the credentials directory {directory} belongs to another user")
        if stat.S_IMODE(info.st_mode) & 0o077:
            try:
                os.chmod(directory, 0o700)
            except OSError as exc:
                raise StorageError(f"cannot make {directory} private: {exc.strerror}") from None

    def _open_lock(self, write: bool) -> int | None:
        if not write and not os.path.lexists(self._directory):
            return None
        self._prepare_directory()
        path = self._directory / _LOCK_NAME
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {path}: {exc.strerror}") from None

    def _update(self, work: Any, write: bool) -> None:
        entries = self._load()
        work(entries)
        if write:
            self._store(entries)

    def _load(self) -> dict[str, dict[str, Any]]:
        path = self.path
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StorageError(f"the credentials file {path} is a symbolic link") from None
            raise StorageError(f"cannot read the credentials file {path}: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StorageError(f"the credentials file {path} is not a regular file")
            if info.st_uid != os.getuid():
                raise StorageError(f"the credentials file {path} belongs to another user")
            with os.fdopen(os.dup(fd), "rb") as file:
                raw = file.read()
        finally:
            os.close(fd)
        try:
            return _check_entries(json.loads(raw))
        except (ValueError, UnicodeDecodeError) as exc:
            aside = path.with_name(_FILE_NAME + _CORRUPT_SUFFIX)
            with contextlib.suppress(OSError):
                os.replace(path, aside)
            # The reason names no value from the file: it may hold secrets.
            reason = "not JSON" if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError) else str(exc)
            logger.warning(
                "the credentials file %s cannot be read (%s); moved aside to %s, logins start over",
                path,
                reason,
                aside,
            )
            return {}

    def _store(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        document = {"format": _FORMAT, "version": _VERSION, "servers": list(entries.values())}
        data = json.dumps(document, indent=1, sort_keys=True, allow_nan=False).encode()
        directory = self._directory
        try:
            fd, temp = tempfile.mkstemp(prefix=".credentials-", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise StorageError(f"cannot write in {directory}: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as file:
                os.fchmod(file.fileno(), 0o600)  # mkstemp's mode already; said again
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise StorageError(f"cannot write the credentials file {self.path}: {exc.strerror}") from None
        with contextlib.suppress(OSError), _open_dir(directory) as dir_fd:
            os.fsync(dir_fd)


@contextlib.contextmanager
def _open_dir(directory: Path) -> Iterator[int]:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def stored_login(
    url: str, headers: Mapping[str, str] | None = None, *, dpop: bool | None = None
) -> httpx2.Auth | None:
    """The authorization the command line and configuration entries use for the server at ``url``.

    An `OAuth` flow on the user's file store (`FileTokenStorage`) with no
    redirect handler: the login kept for the server (by ``trio-mcp login``,
    or an application using the same store) is used, and refreshed when it
    expires, but no new login is ever started: nothing opens a browser or
    waits for a person. A server that needs a login raises `AuthRequired`,
    as without the flow, also when its authorization server cannot be used
    (the ``login`` command then says why).

    `None` when ``headers`` carry an ``Authorization`` header of their own,
    which then goes as it is. ``dpop`` is the flow's choice of DPoP (a
    configuration entry's ``dpop``), `None` for the default.
    """
    if headers is not None and any(name.lower() == "authorization" for name in headers):
        return None
    from ._flow import OAuth

    return _KeptLogin(OAuth(url, storage=FileTokenStorage(), dpop=dpop))


class _KeptLogin(httpx2.Auth):
    """A flow that can only use a kept login: when it cannot go on, the server's refusal stands."""

    def __init__(self, flow: OAuth) -> None:
        self._flow = flow

    def __repr__(self) -> str:
        return f"<kept login: {self._flow!r}>"

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        """Not supported: the flow runs on an `httpx2.AsyncClient` only."""
        raise RuntimeError("a kept login needs an httpx2.AsyncClient")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The flow's requests, until it ends or cannot go on (then the last answer stands)."""
        flow = self._flow.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                try:
                    outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return
                except AuthorizationFailed as exc:
                    logger.info("no login kept for %s can be used (%s)", _shown(str(request.url)), exc.reason)
                    return
        finally:
            await flow.aclose()


def _shown(url: str) -> str:
    return url.split("?", 1)[0]

"""The file store of logins: private, atomic, shared by processes, and never half-written."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import trio

from trio_mcp.auth import ClientInfo, Tokens, TokenStorage
from trio_mcp.auth._storage import FileTokenStorage, StorageError, default_state_dir

REPO = Path(__file__).resolve().parent.parent
RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"


def client(client_id: str = "client-1", secret: str | None = "s3cret-client") -> ClientInfo:
    return ClientInfo(
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        redirect_uris=("http://127.0.0.1:1234/callback",),
        issuer=ISSUER,
        extra={"client_name": "trio-mcp", "grant_types": ["authorization_code", "refresh_token"]},
    )


def tokens(access: str = "at-SECRET-1", refresh: str | None = "rt-SECRET-1") -> Tokens:
    return Tokens(
        access_token=access,
        token_type="Bearer",
        refresh_token=refresh,
        scope="mcp:read",
        expires_at=1_900_000_000.5,
    )


async def test_round_trip_and_keys(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path / "auth")
    assert isinstance(store, TokenStorage)
    assert await store.get_client(RESOURCE, ISSUER) is None
    assert await store.get_tokens(RESOURCE, ISSUER, "client-1") is None

    await store.set_client(RESOURCE, ISSUER, client())
    await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens())
    # Another object (another process, a restart) sees the same.
    again = FileTokenStorage(tmp_path / "auth")
    got = await again.get_client(RESOURCE, ISSUER)
    assert got == client()
    assert got is not None
    assert got.client_secret == "s3cret-client"
    assert dict(got.extra) == {
        "client_name": "trio-mcp",
        "grant_types": ["authorization_code", "refresh_token"],
    }
    assert await again.get_tokens(RESOURCE, ISSUER, "client-1") == tokens()

    # Keyed by resource, issuer and client: nothing leaks across any of them.
    assert await again.get_client(RESOURCE, "https://other-issuer.example.com") is None
    assert await again.get_client("https://other.example.com/mcp", ISSUER) is None
    assert await again.get_tokens(RESOURCE, ISSUER, "client-2") is None
    assert await again.get_tokens(RESOURCE, "https://other-issuer.example.com", "client-1") is None

    # Replacing tokens (a refresh with rotation) keeps the registration.
    await again.set_tokens(RESOURCE, ISSUER, "client-1", tokens("at-2", "rt-2"))
    assert await store.get_tokens(RESOURCE, ISSUER, "client-1") == tokens("at-2", "rt-2")
    assert await store.get_client(RESOURCE, ISSUER) == client()
    assert await store.resources() == [(RESOURCE, ISSUER)]


async def test_reading_creates_nothing(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path / "state" / "auth")
    assert await store.get_client(RESOURCE, ISSUER) is None
    assert await store.resources() == []
    assert not (tmp_path / "state").exists()
    await store.forget(RESOURCE)  # a change: the directory is made
    assert (tmp_path / "state" / "auth").is_dir()


async def test_forget_one_issuer_or_all(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path)
    other_issuer = "https://auth2.example.com"
    other_resource = "https://other.example.com/mcp"
    for resource, issuer in [(RESOURCE, ISSUER), (RESOURCE, other_issuer), (other_resource, ISSUER)]:
        await store.set_client(resource, issuer, client())
        await store.set_tokens(resource, issuer, "client-1", tokens())

    await store.forget(RESOURCE, other_issuer)
    assert await store.get_client(RESOURCE, other_issuer) is None
    assert await store.get_client(RESOURCE, ISSUER) == client()

    await store.forget(RESOURCE)
    assert await store.get_tokens(RESOURCE, ISSUER, "client-1") is None
    assert await store.get_client(other_resource, ISSUER) == client()
    assert await store.resources() == [(other_resource, ISSUER)]
    # Forgetting what is not there is no error.
    await store.forget("https://never.example.com/mcp")


async def test_permissions_private_even_with_an_open_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = FileTokenStorage(tmp_path / "deep" / "auth")
        await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "deep" / "auth").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    lock = store.path.with_name("credentials.lock")
    assert stat.S_IMODE(os.stat(lock).st_mode) == 0o600
    # Only the file and its lock: no temporary file is left behind.
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["credentials.json", "credentials.lock"]


async def test_an_open_directory_is_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "auth"
    directory.mkdir()
    directory.chmod(0o755)
    await FileTokenStorage(directory).set_client(RESOURCE, ISSUER, client())
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


async def test_symlinked_file_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "auth"
    directory.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (directory / "credentials.json").symlink_to(target)
    store = FileTokenStorage(directory)
    with pytest.raises(StorageError, match="symbolic link"):
        await store.get_client(RESOURCE, ISSUER)
    assert target.read_text() == "{}"


async def test_a_file_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "credentials.json").mkdir()
    with pytest.raises(StorageError):
        await FileTokenStorage(tmp_path).get_client(RESOURCE, ISSUER)


@pytest.mark.parametrize(
    "content",
    [
        b'{"format": "trio-mcp-credentials", "version": 1, "servers": [{"resource": "x", "iss',  # truncated
        b"\xff\xfe not text",
        b"[]",
        b'{"format": "something-else", "version": 1, "servers": []}',
        b'{"format": "trio-mcp-credentials", "version": 99, "servers": []}',
        # Wrong types inside an entry: the token is a number.
        (
            b'{"format": "trio-mcp-credentials", "version": 1, "servers": [{"resource": "r", "issuer": "i",'
            b' "client": null, "tokens": {"c": {"access_token": 5, "token_type": "Bearer"}}}]}'
        ),
    ],
    ids=["truncated", "not-utf8", "not-an-object", "other-format", "other-version", "wrong-type"],
)
async def test_corrupt_file_is_moved_aside_and_logins_start_over(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    store = FileTokenStorage(tmp_path)
    store.path.write_bytes(content + b' "at-LEAKED-TOKEN"')
    with caplog.at_level(logging.WARNING, logger="trio_mcp.auth"):
        assert await store.get_tokens(RESOURCE, ISSUER, "client-1") is None
    assert "cannot be read" in caplog.text
    assert "LEAKED" not in caplog.text
    aside = store.path.with_name("credentials.json.corrupt")
    assert aside.read_bytes() == content + b' "at-LEAKED-TOKEN"'
    assert not store.path.exists()
    # The store works again at once.
    await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens())
    assert await store.get_tokens(RESOURCE, ISSUER, "client-1") == tokens()


async def test_no_secret_in_repr_file_errors_or_logs(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path)
    await store.set_client(RESOURCE, ISSUER, client())
    await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens())
    text = repr(store) + repr(await store.get_client(RESOURCE, ISSUER))
    text += repr(await store.get_tokens(RESOURCE, ISSUER, "client-1"))
    for secret in ("s3cret-client", "at-SECRET-1", "rt-SECRET-1"):
        assert secret not in text
    assert str(tmp_path) in repr(store)


async def test_default_directory_follows_xdg_state_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_state_dir() == tmp_path / "state" / "trio-mcp" / "auth"
    store = FileTokenStorage()
    await store.set_client(RESOURCE, ISSUER, client())
    assert (tmp_path / "state" / "trio-mcp" / "auth" / "credentials.json").is_file()
    # A relative XDG_STATE_HOME is ignored, as the specification says.
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "trio-mcp" / "auth"


# ------------------------------------------------------------------ cancellation


def _hold_lock(store: FileTokenStorage) -> int:
    import fcntl

    store.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(store.path.with_name("credentials.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


async def test_cancelled_while_waiting_for_the_lock_writes_nothing(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path)
    await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens())
    before = store.path.read_bytes()
    fd = _hold_lock(store)
    try:
        with trio.move_on_after(0.2) as scope:
            await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens("at-NEW", "rt-NEW"))
        assert scope.cancelled_caught
    finally:
        os.close(fd)
    assert store.path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["credentials.json", "credentials.lock"]


async def test_cancellation_after_the_lock_is_taken_does_not_stop_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancel exactly while the write runs in its thread: it completes, then Cancelled is raised."""
    store = FileTokenStorage(tmp_path)
    started = trio.Event()
    token = trio.lowlevel.current_trio_token()
    real_store = FileTokenStorage._store

    def slow_store(self: FileTokenStorage, entries: object) -> None:
        token.run_sync_soon(started.set)
        time.sleep(0.3)
        real_store(self, entries)  # type: ignore[arg-type]

    monkeypatch.setattr(FileTokenStorage, "_store", slow_store)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            scope = trio.CancelScope()

            async def write() -> None:
                with scope:
                    await store.set_tokens(RESOURCE, ISSUER, "client-1", tokens("at-ROTATED", "rt-ROTATED"))

            nursery.start_soon(write)
            await started.wait()
            scope.cancel()
    assert scope.cancelled_caught
    monkeypatch.undo()
    assert await store.get_tokens(RESOURCE, ISSUER, "client-1") == tokens("at-ROTATED", "rt-ROTATED")


# ------------------------------------------------------------------ processes

_WRITER = textwrap.dedent(
    """
    import sys, trio
    from trio_mcp.auth import Tokens
    from trio_mcp.auth._storage import FileTokenStorage

    async def main(directory, name, count):
        store = FileTokenStorage(directory)
        for i in range(count):
            await store.set_tokens("https://mcp.example.com/mcp", "https://auth.example.com",
                                   f"{name}-{i}", Tokens(access_token=f"at-{name}-{i}" + "x" * 2000))

    trio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
    """
)


def _spawn_writer(directory: Path, name: str, count: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(directory), name, str(count)], env=env)


@pytest.mark.slow
async def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    count = 40
    writers = [_spawn_writer(tmp_path, name, count) for name in ("a", "b")]
    with trio.fail_after(120):
        codes = [await trio.to_thread.run_sync(w.wait) for w in writers]
    assert codes == [0, 0]
    store = FileTokenStorage(tmp_path)
    for name in ("a", "b"):
        for i in range(count):
            got = await store.get_tokens(RESOURCE, ISSUER, f"{name}-{i}")
            assert got is not None, (name, i)
            assert got.access_token.startswith(f"at-{name}-{i}x")


@pytest.mark.slow
async def test_a_reader_never_sees_a_half_written_file(tmp_path: Path) -> None:
    """A process rewrites the file again and again; reading it without the lock always parses."""
    store = FileTokenStorage(tmp_path)
    await store.set_tokens(RESOURCE, ISSUER, "seed", tokens())
    writer = _spawn_writer(tmp_path, "w", 60)
    reads = 0
    try:
        with trio.fail_after(120):
            while writer.poll() is None:
                document = json.loads(store.path.read_bytes())
                assert document["format"] == "trio-mcp-credentials"
                reads += 1
                await trio.lowlevel.checkpoint()
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
    assert writer.returncode == 0
    assert reads > 0
    assert len(json.loads(store.path.read_bytes())["servers"][0]["tokens"]) == 61


async def test_a_killed_writer_leaves_the_old_file_whole(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path)
    await store.set_tokens(RESOURCE, ISSUER, "seed", tokens())
    writer = _spawn_writer(tmp_path, "k", 10_000)
    with trio.fail_after(60):  # killed once it is writing, at whatever write it is
        while await store.get_tokens(RESOURCE, ISSUER, "k-0") is None:  # noqa: ASYNC110
            await trio.sleep(0.01)
    writer.kill()
    writer.wait()
    # Whatever moment it died at, the file is a whole store, and the seed is in it.
    assert await store.get_tokens(RESOURCE, ISSUER, "seed") == tokens()
    # The kill may leave a temporary file; it never replaces the store.
    await store.set_tokens(RESOURCE, ISSUER, "after", tokens())
    assert await store.get_tokens(RESOURCE, ISSUER, "after") == tokens()

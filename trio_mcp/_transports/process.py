"""The child-process channel: an MCP server on the other end of a pipe.

Everything the failure contract says about processes lives here, and
nothing about JSON-RPC:

* Spawning, with every argument and environment entry checked before any
  system call, and a `SpawnFailed` that says what was searched.
* Four tasks: the stdout reader, the stdin writer, the stderr drainer and
  the process watcher. stderr is always drained (a chatty server never
  blocks) into a bounded tail and ``on_stderr``.
* Writes are never done under a lock. A lone message is written at once
  (`trio_mcp._transports._pipes.write_now`); while others are in flight,
  messages go to the writer task's queue, which joins them into one write,
  and the caller whose message makes the queue
  `~trio_mcp._transports._pipes.FLUSH_AT` long writes it itself, unless the
  writer task is waiting for room. Whatever the pipe does not take waits
  in the queue, or in the writer task's ``send_all``. A server that stops
  reading stdin therefore blocks only the writer task, which closing can
  always cancel.
* A lone request reads its own answer in its own task
  (`trio_mcp._transports._pipes.StdoutReader`): the reader task lends stdout
  while nothing is in flight, and takes it back when no caller came for it
  within `~trio_mcp._transports._pipes.LEASE` seconds.
* Death is watched on the process itself (``waitid``/pidfd), not only
  through stdout EOF, so a server whose grandchild keeps stdout open is still
  seen to die; the output written just before the death is read first.
* Close is bounded and shielded: close stdin, give the server ``kill_grace``
  seconds, then SIGTERM and SIGKILL its whole process group, and reap it;
  the caller's own deadline shortens the graces.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shlex
import signal as signal_module
import subprocess
from collections import deque
from typing import TYPE_CHECKING, ClassVar, Final

import trio

from .._channel import Channel
from .._core.codec import UnreadableJSON, decode
from .._core.framing import LineFramer, clean_line
from .._errors import ServerGone, SpawnFailed
from ._outbox import Outbox
from ._pipes import FLUSH_AT, StdoutReader, write_now

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .._channel import Outgoing, Receiver, TaskStarter
    from .._targets import ProcessTarget

__all__ = ["ProcessChannel", "default_stderr", "describe_command", "signal_name"]

#: After the process exits (or stdout ends), how long to wait for the rest of
#: its output before failing the requests in flight.
EXIT_DRAIN: Final = 0.5
#: The longest that unread output of a dead server delays `ServerGone`.
EXIT_DRAIN_MAX: Final = 5.0
#: How long the process group gets between SIGTERM and SIGKILL.
TERM_GRACE: Final = 1.0
#: ... and at least, even when the caller's deadline has passed: a moment to
#: act on SIGTERM (flush, remove a lock file) before SIGKILL.
TERM_GRACE_MIN: Final = 0.1
#: How long to wait for the kernel to reap the process after SIGKILL.
REAP_WAIT: Final = 2.0
#: A stderr "line" without a newline is cut at this many bytes.
STDERR_LINE_MAX: Final = 64 * 1024
#: How many characters of the command line the server's name shows.
NAME_MAX: Final = 60


def signal_name(number: int) -> str:
    """``SIGKILL`` for 9, and so on."""
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_command(command: str, args: tuple[str, ...], limit: int = NAME_MAX) -> str:
    """The command line as a shell would show it, short enough for a message.

    The program is named by its file name (``python``, not
    ``/usr/local/bin/python``); when that is still longer than ``limit``
    characters, long paths among the arguments are shortened to their file
    names too, and then the middle is cut.
    """
    program = os.path.basename(command) or command
    text = shlex.join([program, *args])
    if len(text) > limit:
        text = shlex.join([program, *(_short_path(arg) for arg in args)])
    if len(text) <= limit:
        return text
    head = (limit - 3) * 2 // 3
    return text[:head] + "..." + text[-(limit - 3 - head) :]


def _short_path(arg: str) -> str:
    if os.sep in arg and len(arg) > 24 and not arg.startswith("-"):
        return "..." + os.sep + os.path.basename(arg.rstrip(os.sep))
    return arg


def _whole_json(line: bytes) -> bool:
    """Whether ``line`` decodes as JSON."""
    try:
        decode(line)
    except UnreadableJSON:
        return False
    return True


def _split_hint(command: str, args: tuple[str, ...]) -> str:
    """A hint for a whole command line given as the command (``"npx -y pkg"``), else ``""``."""
    words = command.split()
    if len(words) < 2 or args:
        return ""
    return (
        f"; the command is a whole command line, which is never split: give the program alone"
        f" and the rest as arguments (command {words[0]!r}, args {words[1:]!r})"
    )


def default_stderr(line: str) -> None:
    """Where a server's stderr lines go by default: the ``trio_mcp.server`` logger, at DEBUG."""
    logging.getLogger("trio_mcp.server").debug("%s", line)


class ProcessChannel(Channel):
    """A channel to an MCP server running as a child process, over its stdin and stdout.

    Args:
        command: The program, looked up on ``PATH`` unless it contains a slash.
        args: Its arguments.
        options: How to start and stop it.
        max_message_bytes: The longest line accepted on stdout.
    """

    pipe_tricks: ClassVar[bool] = True
    """Whether a lone request writes its message and reads its answer in its own task, and a
    pipeline's callers write a batch of `~trio_mcp._transports._pipes.FLUSH_AT` messages
    themselves (`trio_mcp._transports._pipes`). Off (in a subclass), every byte goes through
    the writer and reader tasks, the plain Trio way: what the benchmarks compare against."""

    def __init__(
        self, command: str, args: tuple[str, ...], options: ProcessTarget, max_message_bytes: int
    ) -> None:
        self.command = command
        self.args = args
        self.options = options
        self.kill_grace = options.kill_grace
        self._on_stderr: Callable[[str], object] = (
            options.on_stderr if options.on_stderr is not None else default_stderr
        )
        # What messages name: the command line as the caller wants it shown
        # (a configuration's, unexpanded), else the real one.
        shown = options.shown_as
        self._shown: tuple[str, tuple[str, ...]] = (shown[0], shown[1:]) if shown else (command, args)
        self._described = describe_command(*self._shown)
        self._receiver: Receiver | None = None
        self._starter: TaskStarter | None = None
        self._proc: trio.Process | None = None
        self._stdin_fd = -1
        self._closing = False
        self._closed = trio.Event()
        self._ended = False
        self._gone_started = False

        self._exited = trio.Event()
        self._stdout_eof = trio.Event()
        self._eof = False  # _stdout_eof.is_set(), without a call
        self._stderr_eof = trio.Event()

        # Writing.
        self._outbox = Outbox()
        self._writing = False
        self._write_broken = False

        # Reading (set up when the process starts).
        self._framer = LineFramer(max_message_bytes)
        self._stdout: StdoutReader | None = None

        self._stderr_tail: deque[str] = deque()
        self._stderr_tail_size = 0
        self._stderr_lines = 0

    # --------------------------------------------------------------- names

    @property
    def name(self) -> str:
        pid = self.pid
        where = f" (pid {pid})" if pid is not None else ""
        return f"server {self._described!r}{where}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    @property
    def stderr_tail(self) -> str:
        return "".join(line + "\n" for line in self._stderr_tail)

    @property
    def stderr_lines(self) -> int:
        return self._stderr_lines

    # ------------------------------------------------------------- start

    async def start(self, start_task: TaskStarter, receiver: Receiver) -> None:
        proc = await self._spawn()
        self._proc = proc
        self._receiver = receiver
        self._starter = start_task
        assert proc.stdin is not None
        assert proc.stdout is not None
        self._stdin_fd = proc.stdin.fileno()  # type: ignore[attr-defined]
        stdout = StdoutReader(
            proc.stdout,  # type: ignore[arg-type]
            feed=self._feed,
            ended=self._stdout_ended,
            is_idle=receiver.is_idle,
            lend=self.pipe_tricks,
        )
        self._stdout = stdout
        # No checkpoint from here on: a cancellation reaches the caller only
        # once the tasks that close everything are running.
        start_task(stdout.run, "read_stdout")
        start_task(self._read_stderr, "read_stderr")
        start_task(self._watch_process, "watch_process")
        start_task(self._write_queued, "write_stdin")

    async def _spawn(self) -> trio.Process:
        command = self._shown[0]
        argv: list[str] = [self.command, *self.args]
        for item in argv:
            if "\0" in item:
                raise SpawnFailed(
                    f"cannot start {command!r}: an argument contains a NUL byte", command=command
                )
        options = self.options
        extra = options.env if options.env is not None else {}
        for key, value in extra.items():
            if "\0" in key or "\0" in value:
                raise SpawnFailed(
                    f"cannot start {command!r}: env {key!r} contains a NUL byte", command=command
                )
            if not key or "=" in key:
                raise SpawnFailed(f"cannot start {command!r}: invalid env name {key!r}", command=command)
        cwd = options.cwd
        if cwd is not None and "\0" in cwd:
            raise SpawnFailed(f"cannot start {command!r}: cwd contains a NUL byte", command=command)
        env = {**os.environ, **extra} if options.inherit_env else dict(extra)
        try:
            return await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise SpawnFailed(self._spawn_message(exc, env), command=command) from exc

    def _spawn_message(self, exc: OSError, env: Mapping[str, str]) -> str:
        command = self._shown[0]
        cwd = self.options.cwd
        if cwd is not None and exc.filename == cwd:
            return f"cannot start {command!r}: working directory {cwd!r}: {exc.strerror}"
        if isinstance(exc, FileNotFoundError):
            hint = _split_hint(*self._shown)
            if os.sep in self.command:
                return f"cannot start {command!r}: no such file{hint}"
            path = env.get("PATH", os.defpath)
            return f"cannot start {command!r}: command not found (searched PATH={path!r}){hint}"
        if isinstance(exc, PermissionError):
            return f"cannot start {command!r}: permission denied (not executable?)"
        return f"cannot start {command!r}: {exc.strerror or exc}"

    def _log(self, text: str) -> None:
        if self._receiver is not None:
            self._receiver.channel_log(text)

    # ------------------------------------------------------------- writing

    def send(self, data: bytes, about: Outgoing, *, batch: bool = False) -> None:
        if self._write_broken:
            return
        stdout = self._stdout
        if batch or self._writing or self._outbox or stdout is None or not stdout.lent:
            # Other messages are queued or likely to follow (requests go
            # one at a time only while stdout is lent): leave this one to the
            # writer task, which joins whatever is queued during this
            # scheduler pass into one write.
            outbox = self._outbox
            outbox.put(data, about.request_id)
            if len(outbox) >= FLUSH_AT and self.pipe_tricks and not self._writing:
                # A pipeline's batch is big enough: the server gets it now, and
                # answers it while the tasks of this pass make more.
                self._write_at_once(outbox.take())
            return
        self._write_at_once(data)

    def _write_at_once(self, data: bytes) -> None:
        """Write what the pipe takes of ``data`` now, in the caller's task, with nothing queued
        before it; the rest waits in the queue, in order, for the writer task."""
        try:
            written = write_now(self._stdin_fd, data)
        except OSError as exc:
            self._broken_pipe(exc)
            return
        if written < len(data):
            self._outbox.put(data[written:])

    def withdraw(self, request_id: int) -> bool:
        # Never written: void it where it waits, in O(1).
        return self._outbox.withdraw(request_id)

    async def _write_queued(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdin is not None
        stdin = proc.stdin
        outbox = self._outbox
        fd = self._stdin_fd
        tricks = self.pipe_tricks
        while True:
            await outbox.wait()
            batch = outbox.take()
            if not batch:
                continue
            if tricks:
                # What the pipe takes at once is written at once; only the rest waits for
                # room, and only while it waits is the writer "writing" (callers that
                # would write a batch themselves then leave it queued, in order).
                try:
                    written = write_now(fd, batch)
                except OSError as exc:
                    self._broken_pipe(exc)
                    return
                if written == len(batch):
                    continue
                batch = batch[written:]
            self._writing = True
            try:
                await stdin.send_all(batch)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                self._broken_pipe(exc)
                return
            finally:
                self._writing = False

    def _write_last(self) -> None:
        """Write what is still queued before stdin closes, as far as the pipe takes it at once.

        A call cancelled just before the close queued its
        ``notifications/cancelled``: the server is told, not left to find the
        end of its input. Nothing waits here (a server that stopped reading
        gets what its pipe holds); while the writer task is in the middle of
        a write, what follows it is dropped rather than interleaved.
        """
        if self._write_broken or self._writing or not self._outbox or self._stdin_fd < 0:
            return
        batch = self._outbox.take()
        with contextlib.suppress(OSError):  # the server closed its stdin: it is going anyway
            write_now(self._stdin_fd, batch)

    def _broken_pipe(self, exc: BaseException) -> None:
        if self._write_broken:
            return
        self._write_broken = True
        self._outbox.clear()
        if not self._closing:
            self._log(f"writing to {self.name} failed ({exc!r}); it stopped reading its stdin")
            self._begin_gone()

    # ------------------------------------------------------------- reading

    def _feed(self, data: bytes) -> None:
        receiver = self._receiver
        assert receiver is not None
        deliver = receiver.message_received
        for line in self._framer.feed(data):
            if type(line) is bytes and not (line.startswith(b"{") and line.endswith(b"}")):
                line = clean_line(line)
                if not line:
                    continue
            deliver(line)

    def _stdout_ended(self, exc: BaseException | None = None) -> None:
        if self._eof:
            return
        if exc is not None and not self._closing:
            self._log(f"reading the stdout of {self.name} failed: {exc!r}")
        if exc is None:
            receiver = self._receiver
            assert receiver is not None
            for line in self._framer.eof():
                if isinstance(line, bytes):
                    line = clean_line(line)
                    if not line:
                        continue
                    if not _whole_json(line):
                        # A last line without its newline that is not a whole
                        # message was cut short by the death: a symptom of it,
                        # which ServerGone reports, not a line to parse.
                        self._log(f"{self.name} ended its output in the middle of a line ({len(line)} bytes)")
                        continue
                receiver.message_received(line)
        self._eof = True
        self._stdout_eof.set()
        if not self._closing:
            self._begin_gone()

    async def read_until(self, done: Callable[[], bool]) -> bool:
        stdout = self._stdout
        return False if stdout is None else await stdout.read_until(done)

    def _take_stdout_back(self) -> None:
        """Make the reader task read stdout again (the server died, or we close)."""
        if self._stdout is not None:
            self._stdout.take_back(interrupt=True)

    # -------------------------------------------------------------- stderr

    async def _read_stderr(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stderr is not None
        stderr = proc.stderr
        pending = b""
        try:
            while True:
                data = bytes(await stderr.receive_some(65536))
                if not data:
                    break
                data = pending + data if pending else data
                lines = data.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    self._stderr_line(line)
                while len(pending) > STDERR_LINE_MAX:
                    self._stderr_line(pending[:STDERR_LINE_MAX])
                    pending = pending[STDERR_LINE_MAX:]
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        if pending:
            self._stderr_line(pending)
        self._stderr_eof.set()

    def _stderr_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self.stderr_line(text)

    def stderr_line(self, text: str) -> None:
        """Record one line the server wrote to stderr (in the tail, and to ``on_stderr``)."""
        self._stderr_lines += 1
        limit = self.options.stderr_tail_bytes
        tail = self._stderr_tail
        tail.append(text)
        self._stderr_tail_size += len(text) + 1
        while self._stderr_tail_size > limit and len(tail) > 1:
            self._stderr_tail_size -= len(tail.popleft()) + 1
        if self._stderr_tail_size > limit:
            # One line alone is over the bound: keep its end.
            keep = tail[0][-limit:] if limit else ""
            tail[0] = keep
            self._stderr_tail_size = len(keep) + 1
            if not keep:
                tail.clear()
                self._stderr_tail_size = 0
        try:
            self._on_stderr(text)
        except Exception as exc:
            self._log(f"on_stderr raised {exc!r}")

    # ---------------------------------------------------------------- death

    async def _watch_process(self) -> None:
        proc = self._proc
        assert proc is not None
        await proc.wait()
        self._exited.set()
        if not self._closing:
            self._begin_gone()

    def _begin_gone(self) -> None:
        if self._gone_started or self._closing or self._ended:
            return
        self._gone_started = True
        if self._stdout is not None:
            # Nobody may be reading stdout: the last words must be read.
            self._stdout.take_back(interrupt=False)
        if self._starter is not None:
            self._starter(self._gone, "server_gone")

    async def _gone(self) -> None:
        proc = self._proc
        assert proc is not None
        # Give the pipes a moment: the answers and stderr lines written just
        # before the exit are worth having. A grandchild may hold the pipes
        # open forever, so the wait is bounded; but as long as stdout still
        # has unread bytes (a busy machine, a big last answer) it is
        # extended, up to a hard limit.
        deadline = trio.current_time() + EXIT_DRAIN_MAX
        while True:
            with trio.move_on_after(EXIT_DRAIN):
                await self._exited.wait()
                await self._stdout_eof.wait()
                await self._stderr_eof.wait()
            if self._stdout_eof.is_set() and self._stderr_eof.is_set():
                break
            if trio.current_time() >= deadline or not self._stdout_has_data():
                break
        if self._closing or self._ended:
            return
        self._ended = True
        error = self._gone_error()
        if not self._stdout_eof.is_set():
            self._take_stdout_back()
        receiver = self._receiver
        assert receiver is not None
        receiver.channel_ended(error)
        if proc.returncode is None:
            with trio.CancelScope(shield=True):
                await self._terminate()

    def _gone_error(self) -> ServerGone:
        code = self.returncode
        if code is None:
            if self._stdout_eof.is_set():
                what = "closed its stdout but kept running; it is being stopped"
            else:
                what = "stopped reading its stdin; it is being stopped"
        elif code < 0:
            what = f"was killed by {signal_name(-code)}"
        else:
            what = f"exited with code {code}"
        return ServerGone(
            f"{self.name} {what}",
            exit_code=code if code is not None and code >= 0 else None,
            signal=-code if code is not None and code < 0 else None,
            stderr_tail=self.stderr_tail,
            server=self.name,
            command=self._shown[0],
            arguments=self._shown[1],
            pid=self.pid,
        )

    def _stdout_has_data(self) -> bool:
        stdout = self._stdout
        return stdout is not None and not self._stdout_eof.is_set() and stdout.has_data()

    # ---------------------------------------------------------------- close

    async def aclose(self, deadline: float | None = None) -> None:
        if deadline is None:
            deadline = trio.current_effective_deadline()
        if self._proc is None:
            await trio.lowlevel.checkpoint()
            return
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        if self._stdout is not None:
            self._stdout.closing = True
        with trio.CancelScope(shield=True):
            if not self._stdout_eof.is_set():
                self._take_stdout_back()
            try:
                await self._terminate(deadline)
            finally:
                proc = self._proc
                for stream in (proc.stdin, proc.stdout, proc.stderr):
                    if stream is not None:
                        await stream.aclose()
        self._closed.set()

    async def _terminate(self, deadline: float = math.inf) -> None:
        """Stop the server: close stdin, wait, SIGTERM the group, wait, SIGKILL, reap.

        The waits fit before ``deadline`` (the caller's): with no time left,
        stdin's end gets no grace, and SIGKILL follows SIGTERM after
        `TERM_GRACE_MIN`.
        """
        proc = self._proc
        assert proc is not None
        self._write_last()
        self._write_broken = True
        self._outbox.clear()
        if proc.stdin is not None:
            await proc.stdin.aclose()
        if proc.returncode is None:
            with trio.move_on_after(max(0.0, min(self.kill_grace, deadline - trio.current_time()))):
                await proc.wait()
        # Whether or not the leader left politely, what is left of its group
        # (npx's node, uvx's python, ...) is asked to go, then made to.
        if self._signal_group(signal_module.SIGTERM):
            with trio.move_on_after(max(TERM_GRACE_MIN, min(TERM_GRACE, deadline - trio.current_time()))):
                await proc.wait()
                # Group members are not our children: no event tells us they
                # are gone, so poll.
                while self._group_alive():  # noqa: ASYNC110
                    await trio.sleep(0.02)
            self._signal_group(signal_module.SIGKILL)
        if proc.returncode is None:
            proc.kill()
            with trio.move_on_after(REAP_WAIT):
                await proc.wait()
            if proc.returncode is None:
                self._log(f"{self.name} could not be reaped after SIGKILL; abandoned")

    def _signal_group(self, sig: int) -> bool:
        proc = self._proc
        assert proc is not None
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _group_alive(self) -> bool:
        proc = self._proc
        assert proc is not None
        return self._signal_group(0) and _group_has_live_member(proc.pid)


def _group_has_live_member(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (zombies aside).

    ``kill(-pgid, 0)`` also succeeds for exited children that their new
    parent has not reaped yet; where ``/proc`` exists, look past those.
    """
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        # After the command: state, parent pid, process group.
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False

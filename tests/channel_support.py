"""A scripted fake channel, to test a `trio_mcp.Session` alone.

`ScriptedChannel` implements the `trio_mcp._channel.Channel` interface from a
script: the messages the session must send, in order, and what the server
says back, and when. No process, no stream, no framing: every message the
session sends is decoded and checked against the next `Expect`, and every
canned message is handed to the session as one line, as a channel's reader
would. Its ``sleep`` steps take virtual time, so a test runs under
``autojump_clock`` and can assert exact deadlines.

    script = [
        Expect("tools/list"),
        Sleep(2),
        Answer({"tools": []}),
    ]
    async with scripted_session(script) as (session, channel):
        assert await session.request("tools/list") == {"tools": []}
        assert trio.current_time() == 2

A message that does not match its step, or one sent after the script has
run out, is recorded in `ScriptedChannel.problems` (and the script stops:
the session then waits as it would on a silent server, so a test bounds its
waits with `trio.fail_after`); `scripted_session` checks on the way out that
every step was played and nothing went wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from trio_mcp._channel import Channel
from trio_mcp._errors import MCPError, ServerGone
from trio_mcp._options import SessionOptions
from trio_mcp._session import Session, new_session

__all__ = [
    "ANY",
    "Answer",
    "End",
    "Expect",
    "ExpectAnswer",
    "ExpectNothing",
    "Fail",
    "Hang",
    "Line",
    "Notify",
    "ScriptedChannel",
    "Sleep",
    "scripted_session",
]


class _Any:
    def __eq__(self, other: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "ANY"


#: Matches any value in an `Expect`'s params (or as the params themselves).
ANY: Any = _Any()


class Expect:
    """The session must send this message next: a request, or a notification when ``notification``.

    ``params`` (compared with ``==``, so `ANY` matches anything) is the whole
    params object; `None` for a message without params. A request's id is
    remembered for the `Answer` and `Fail` steps that follow.
    """

    def __init__(self, method: str, params: Any = ANY, *, notification: bool = False) -> None:
        self.method = method
        self.params = params
        self.notification = notification

    def __repr__(self) -> str:
        kind = "notification" if self.notification else "request"
        return f"Expect({kind} {self.method!r}, params={self.params!r})"


class ExpectAnswer:
    """The session must next send its answer to the server's request ``id``:
    ``result`` (compared with ``==``), or, when ``error`` is given, an error
    answer whose ``code`` is ``error``."""

    def __init__(self, id: Any, result: Any = ANY, *, error: int | None = None) -> None:
        self.id = id
        self.result = result
        self.error = error

    def __repr__(self) -> str:
        what = f"error {self.error}" if self.error is not None else f"result {self.result!r}"
        return f"ExpectAnswer(id={self.id!r}, {what})"


class Answer:
    """The server answers a request with ``result``: by default the last one expected;
    ``to=n`` answers the n-th request expected (0 is the first), ``id=`` any id at all."""

    def __init__(self, result: Any, *, to: int = -1, id: Any = None) -> None:
        self.result = result
        self.to = to
        self.id = id


class Fail:
    """The server answers a request (as `Answer` picks it) with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None, *, to: int = -1) -> None:
        self.error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            self.error["data"] = data
        self.to = to


class Notify:
    """The server sends a notification."""

    def __init__(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            self.message["params"] = params


class Line:
    """The server writes one raw line (without its newline): anything at all, JSON or not."""

    def __init__(self, data: bytes) -> None:
        self.data = data


class Sleep:
    """Virtual time passes (``seconds``) before the next step."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class ExpectNothing:
    """Nothing may be sent for ``seconds`` of virtual time."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class End:
    """The connection ends (the server died, say): the channel reports ``error``."""

    def __init__(self, error: MCPError | None = None) -> None:
        self.error = error


class Hang:
    """The server says nothing more, ever (the script is over; later messages are not checked)."""


Step = Expect | ExpectAnswer | Answer | Fail | Notify | Line | Sleep | ExpectNothing | End | Hang


class ScriptedChannel(Channel):
    """A `Channel` that plays a script of expected messages and canned answers.

    Attributes:
        sent: Every message the session sent, decoded, in order.
        ids: The ids of the requests the `Expect` steps matched, in order.
        problems: What went wrong: a message that did not match its step,
            or one the script did not expect.
        played: How many steps were played.
    """

    def __init__(self, script: list[Step], name: str = "scripted server") -> None:
        self.script = list(script)
        self.sent: list[dict[str, Any]] = []
        self.ids: list[Any] = []
        self.problems: list[str] = []
        self.played = 0
        self.closed = False
        self.ended = False
        self._name = f"server {name!r}"
        self._receiver: Any = None
        self._inbox_send, self._inbox = trio.open_memory_channel[dict[str, Any]](math.inf)
        self._hanging = False

    @property
    def name(self) -> str:
        return self._name

    async def start(self, start_task: Callable[..., None], receiver: Any) -> None:
        await trio.lowlevel.checkpoint()
        self._receiver = receiver
        start_task(self._play, "script")

    def send(self, data: bytes, about: Any = None, *, batch: bool = False) -> None:
        if self.ended or self.closed:
            return
        assert data.endswith(b"\n"), f"not a line: {data!r}"
        assert data.count(b"\n") == 1, f"not one line: {data!r}"
        message = json.loads(data)
        self.sent.append(message)
        self._inbox_send.send_nowait(message)

    async def aclose(self, deadline: float | None = None) -> None:
        await trio.lowlevel.checkpoint()
        self.closed = True

    # ------------------------------------------------------------ the script

    def _deliver(self, message: dict[str, Any] | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self._receiver.message_received(line)

    def _answer_id(self, to: int) -> Any:
        return self.ids[to]

    async def _play(self) -> None:
        for step in self.script:
            if isinstance(step, Expect):
                message = await self._inbox.receive()
                problem = self._mismatch(step, message)
                if problem is not None:
                    self.problems.append(problem)
                    break
                if not step.notification:
                    self.ids.append(message["id"])
            elif isinstance(step, ExpectAnswer):
                message = await self._inbox.receive()
                problem = self._wrong_answer(step, message)
                if problem is not None:
                    self.problems.append(problem)
                    break
            elif isinstance(step, Answer):
                request_id = step.id if step.id is not None else self._answer_id(step.to)
                self._deliver({"jsonrpc": "2.0", "id": request_id, "result": step.result})
            elif isinstance(step, Fail):
                self._deliver({"jsonrpc": "2.0", "id": self._answer_id(step.to), "error": step.error})
            elif isinstance(step, Notify):
                self._deliver(step.message)
            elif isinstance(step, Line):
                self._deliver(step.data)
            elif isinstance(step, Sleep):
                await trio.sleep(step.seconds)
            elif isinstance(step, ExpectNothing):
                with trio.move_on_after(step.seconds):
                    message = await self._inbox.receive()
                    self.problems.append(f"expected nothing for {step.seconds} s, got {message!r}")
                    break
            elif isinstance(step, End):
                self.ended = True
                error = step.error if step.error is not None else ServerGone(f"{self._name} went away")
                self._receiver.channel_ended(error)
            else:
                self._hanging = True
            self.played += 1
            if self._hanging or self.ended:
                break
        while not self.ended and not self._hanging and not self.problems:
            # The script is over: anything more is a surprise.
            message = await self._inbox.receive()
            self.problems.append(f"unexpected message after the script: {message!r}")
        await trio.sleep_forever()

    @staticmethod
    def _mismatch(step: Expect, message: dict[str, Any]) -> str | None:
        if message.get("jsonrpc") != "2.0":
            return f"{step!r}: not JSON-RPC 2.0: {message!r}"
        if message.get("method") != step.method:
            return f"{step!r}: got {message!r}"
        if step.notification == ("id" in message):
            return f"{step!r}: got {message!r}"
        if step.params != message.get("params"):
            return f"{step!r}: params differ: {message.get('params')!r}"
        return None

    @staticmethod
    def _wrong_answer(step: ExpectAnswer, message: dict[str, Any]) -> str | None:
        if "method" in message or message.get("id") != step.id:
            return f"{step!r}: got {message!r}"
        if step.error is not None:
            error = message.get("error")
            if not isinstance(error, dict) or error.get("code") != step.error:
                return f"{step!r}: got {message!r}"
        elif "result" not in message or message["result"] != step.result:
            return f"{step!r}: got {message!r}"
        return None

    def check(self) -> None:
        """Assert that nothing went wrong and every step was played."""
        assert not self.problems, self.problems
        assert self.played == len(self.script), (
            f"the script stopped at step {self.played}: {self.script[self.played]!r}"
        )


@asynccontextmanager
async def scripted_session(
    script: list[Step],
    *,
    options: SessionOptions | None = None,
    check: bool = True,
) -> AsyncIterator[tuple[Session, ScriptedChannel]]:
    """A started `Session` over a `ScriptedChannel` playing ``script``.

    On the way out (not after an exception) the session is closed and, with
    ``check``, the channel's `ScriptedChannel.check` runs.
    """
    channel = ScriptedChannel(script)
    async with new_session(channel, options) as session:
        yield session, channel
    if check:
        channel.check()

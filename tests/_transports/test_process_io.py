"""The stdio transport's I/O contract, checked against real child processes.

Every test starts ``tests/servers/io_server.py`` (standard library only) with
the running interpreter. In its ``script`` mode each request's ``params.ops``
tells the server exactly which bytes to write to stdout and stderr, so a test
spells out the wire traffic it is about; see that script's docstring.

Covered here: spawning (no shell, environment, working directory,
`SpawnFailed`), framing of stdout, lines that are not JSON-RPC, responses
(errors, unknown ids, any order), notification routing and subscribers,
requests from the server, stderr draining, and ``notify``. Process death,
closing and timeouts are covered by ``tests/_transports/test_process_lifecycle.py``.

Every test uses the real clock, bounded by ``trio.fail_after(LIMIT)``: a
hang fails the test instead of stalling the suite. No test asserts speed.
"""

from __future__ import annotations

import json
import logging
import stat
import sys
from typing import Any

import pytest
import trio
import trio.testing
from client_support import Collector
from opening_support import process_session
from paths import SERVERS_DIR

import trio_mcp
from trio_mcp import (
    MCPError,
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    RpcError,
    SpawnFailed,
)
from trio_mcp._transports import process as process_module
from trio_mcp._transports._pipes import FLUSH_AT, write_now
from trio_mcp._transports.process import ProcessChannel

SERVER = SERVERS_DIR / "io_server.py"

#: Seconds any one test may take before it counts as hung.
LIMIT = 10

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


# ------------------------------------------------------------------ helpers


def open_server(*args: str, mode: str = "script", **kwargs: Any):
    """A session with ``io_server.py MODE ARGS...``, run by this interpreter."""
    return process_session(sys.executable, [str(SERVER), mode, *args], **kwargs)


def ops(*items: list[Any], **extra: Any) -> dict[str, Any]:
    """Request params that make the ``script`` server run ``items``."""
    return {"ops": list(items), **extra}


def out(data: bytes) -> list[Any]:
    """The op writing ``data`` to the server's stdout (``@ID@``: this request's id)."""
    return ["out", data.decode("latin-1")]


def out_bytes(data: bytes) -> list[Any]:
    """The op writing ``data`` one byte per write, flushing each."""
    return ["out_bytes", data.decode("latin-1")]


def err(data: bytes, count: int = 1) -> list[Any]:
    """The op writing ``data`` ``count`` times to the server's stderr."""
    return ["err", data.decode("latin-1"), count]


def ask(message: dict[str, Any] | bytes) -> list[Any]:
    """The op sending a request of the server's and recording the client's reply."""
    data = message if isinstance(message, bytes) else line(message)
    return ["ask", data.decode("latin-1")]


def line(message: Any) -> bytes:
    """One JSON message as a line, the way a server writes it."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def note(method: str = "notifications/message", **params: Any) -> bytes:
    """A notification line from the server."""
    return line({"jsonrpc": "2.0", "method": method, "params": params})


def answer(result: bytes = b'{"ok":true}') -> bytes:
    """A response line to the request being handled, with a raw ``result``."""
    return b'{"jsonrpc":"2.0","id":@ID@,"result":' + result + b"}\n"


HOLD = ["hold"]
ANSWER_HELD = ["answer_held"]
RESPOND = ["respond"]


def progress(token: str, value: int = 1) -> bytes:
    """A ``notifications/progress`` line for ``token``."""
    return note("notifications/progress", progressToken=token, progress=value)


async def start_held(nursery, wire, results, name, *, token=None, **kwargs) -> None:
    """Send request ``name`` that the server holds unanswered; its result goes to ``results[name]``.

    ``token`` becomes its ``params._meta.progressToken``. Returns once the
    request has been written and its task is parked, so that the server reads
    it before anything the caller sends next. The server answers it on an
    ``ANSWER_HELD`` op.
    """
    params = ops(HOLD) if token is None else ops(HOLD, _meta={"progressToken": token})

    async def run() -> None:
        results[name] = await wire.request(name, params, **kwargs)

    nursery.start_soon(run)
    await trio.testing.wait_all_tasks_blocked()


async def take(stream: trio_mcp.NotificationStream, count: int) -> list[dict[str, Any]]:
    """The next ``count`` notifications of ``stream``."""
    got: list[dict[str, Any]] = []
    async for message in stream:
        got.append(message)
        if len(got) == count:
            break
    return got


class CollectingHandler(logging.Handler):
    """A logging handler appending every record to a `Collector`."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records = Collector()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# ------------------------------------------------------------------ spawning


@pytest.mark.parametrize(
    "args",
    [
        [
            "; rm -rf /",
            "$(echo hi)",
            "a b",
            "`id`",
            "*",
            "",
            "'quoted'",
            '"dq"',
            "\\",
            "--flag=$HOME",
            "é ü ∑",
        ],
        ["|", "&&", ">out", "<in", "\ttab\nnewline"],
    ],
)
async def test_arguments_reach_the_server_unchanged(args):
    """No shell, ever: every argument arrives as exactly one argv element, unchanged."""
    with trio.fail_after(LIMIT):
        async with open_server(*args) as wire:
            result = await wire.request("whoami")
    assert result["argv"] == args


async def test_command_path_with_spaces_and_metacharacters(tmp_path):
    """A command whose path holds spaces and ``;`` is executed as one path, not split."""
    folder = tmp_path / "dir with spaces; and $(semicolon)"
    folder.mkdir()
    command = folder / "my server"
    command.write_text(
        f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(SERVER)!r}, run_name='__main__')\n"
    )
    command.chmod(0o755)
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(command, ["script", "x"])) as wire:
            result = await wire.request("whoami")
    assert result["argv"] == ["x"]


async def test_environment_is_inherited_and_layered(monkeypatch):
    """By default the server sees our environment with ``env`` layered over it."""
    monkeypatch.setenv("TRIO_MCP_TEST_PARENT", "from the parent")
    monkeypatch.setenv("TRIO_MCP_TEST_OVERRIDDEN", "parent value")
    env = {"TRIO_MCP_TEST_GIVEN": "given", "TRIO_MCP_TEST_OVERRIDDEN": "given value"}
    with trio.fail_after(LIMIT):
        async with open_server(env=env) as wire:
            child = (await wire.request("whoami"))["env"]
    assert child["TRIO_MCP_TEST_PARENT"] == "from the parent"
    assert child["TRIO_MCP_TEST_GIVEN"] == "given"
    assert child["TRIO_MCP_TEST_OVERRIDDEN"] == "given value"


async def test_environment_not_inherited_is_exactly_env(monkeypatch):
    """``inherit_env=False`` gives the server exactly ``env``, nothing else.

    The check is exact. CPython adds one variable of its own in some setups:
    PEP 538 locale coercion sets ``LC_CTYPE`` when the locale is plain C.
    Setting ``LC_ALL`` turns that coercion off (PEP 538), so ``env`` holds
    it and the child's whole environment must equal ``env``.
    """
    monkeypatch.setenv("TRIO_MCP_TEST_PARENT", "must not leak")
    env = {"LC_ALL": "C", "TRIO_MCP_TEST_ONLY": "yes"}
    with trio.fail_after(LIMIT):
        async with open_server(env=env, inherit_env=False) as wire:
            child = (await wire.request("whoami"))["env"]
    assert child == env


async def test_cwd_is_the_servers_working_directory(tmp_path):
    """``cwd`` sets the server's working directory."""
    with trio.fail_after(LIMIT):
        async with open_server(cwd=tmp_path) as wire:
            result = await wire.request("whoami")
    assert result["cwd"] == str(await trio.Path(tmp_path).resolve())


async def test_spawn_failed_for_a_missing_command():
    """A command not found raises `SpawnFailed` (an `MCPError`) naming the command."""
    command = "trio-mcp-test-no-such-command"
    with trio.fail_after(LIMIT), pytest.raises(SpawnFailed) as info:
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(command)):
            pytest.fail("the body must not run")
    assert isinstance(info.value, MCPError)
    assert command in str(info.value)
    assert info.value.command == command


async def test_spawn_failed_for_a_missing_path(tmp_path):
    """A command path that does not exist raises `SpawnFailed` naming it."""
    command = str(tmp_path / "missing-server")
    with trio.fail_after(LIMIT), pytest.raises(SpawnFailed) as info:
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(command)):
            pytest.fail("the body must not run")
    assert command in str(info.value)


async def test_spawn_failed_for_a_missing_cwd(tmp_path):
    """A working directory that does not exist raises `SpawnFailed`."""
    with trio.fail_after(LIMIT), pytest.raises(SpawnFailed):
        async with open_server(cwd=tmp_path / "no-such-dir"):
            pytest.fail("the body must not run")


async def test_spawn_failed_for_a_file_that_is_not_executable(tmp_path):
    """A file without execute permission raises `SpawnFailed`."""
    command = tmp_path / "server.py"
    command.write_text(SERVER.read_text())
    command.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with trio.fail_after(LIMIT), pytest.raises(SpawnFailed) as info:
        async with trio_mcp.open_session(trio_mcp.ProcessTarget(command, ["script"])):
            pytest.fail("the body must not run")
    assert str(command) in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"command": "py\0thon"},
        {"args": ["ok", "a\0b"]},
        {"env": {"TRIO_MCP\0KEY": "v"}},
        {"env": {"TRIO_MCP_KEY": "v\0w"}},
    ],
    ids=["command", "argument", "env-key", "env-value"],
)
async def test_spawn_failed_for_a_nul_byte_before_any_syscall(monkeypatch, kwargs):
    """A NUL byte in the command, an argument or an env key or value is refused
    with `SpawnFailed` before any process is started."""

    async def must_not_spawn(*args, **kw):
        pytest.fail("a process was started despite a NUL byte")

    monkeypatch.setattr(trio.lowlevel, "open_process", must_not_spawn)
    kwargs = {"command": sys.executable, "args": [str(SERVER), "script"], **kwargs}
    with trio.fail_after(LIMIT), pytest.raises(SpawnFailed):
        async with process_session(kwargs.pop("command"), kwargs.pop("args"), **kwargs):
            pytest.fail("the body must not run")


async def test_a_target_that_cannot_start_raises_spawn_failed_each_time():
    """A target is a value: each opening tries again, and fails the same way, leaving nothing behind."""
    target = trio_mcp.ProcessTarget("trio-mcp-test-no-such-command")
    with trio.fail_after(LIMIT):
        for _ in range(2):
            with pytest.raises(SpawnFailed):
                async with trio_mcp.open_session(target):
                    pytest.fail("the body must not run")
            with pytest.raises(SpawnFailed):
                async with trio_mcp.open_client(target):
                    pytest.fail("the body must not run")


# ------------------------------------------------------------------ framing


@pytest.fixture(params=[True, False], ids=["pipe-tricks", "plain"])
def both_ways(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a test with the process channel's pipe tricks on, then off: the tricks change nothing it can see."""
    monkeypatch.setattr(ProcessChannel, "pipe_tricks", request.param)


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085"])
async def test_unicode_line_separators_inside_strings_do_not_split(char):
    """U+2028, U+2029 and U+0085 written raw inside a JSON string stay in the message."""
    text = f"before{char}after"
    raw = b'{"text":"' + text.encode() + b'"}'
    assert b"\\u" not in raw
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            result = await wire.request("x", ops(out(answer(raw))))
    assert result == {"text": text}


@pytest.mark.parametrize(
    "data",
    [
        answer()[:-1] + b"\r\n",
        b"\xef\xbb\xbf" + answer(),
        b"\n\n" + answer(),
        b"   \n\t\t\n \t \r\n" + answer(),
        b"\xef\xbb\xbf\n\r\n" + answer()[:-1] + b"\r\n",
    ],
    ids=["crlf", "bom", "blank-lines", "whitespace-lines", "all-together"],
)
async def test_tolerated_line_variations(data):
    """CRLF endings, a UTF-8 BOM at the start of a line, blank and
    whitespace-only lines do not stop the response from being delivered."""
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            assert await wire.request("x", ops(out(data))) == {"ok": True}
            assert (await wire.request("next"))["method"] == "next"


@pytest.mark.usefixtures("both_ways")
@pytest.mark.parametrize("ending", [["exit", 0], ["close_stdout"]], ids=["exit", "close-stdout"])
async def test_final_response_without_newline_before_eof_is_delivered(ending):
    """A last response with no trailing newline, followed by EOF on stdout
    (the server exits or closes stdout), still answers its request."""
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            result = await wire.request("x", ops(out(answer(b'{"last":1}')[:-1]), ending))
    assert result == {"last": 1}


@pytest.mark.usefixtures("both_ways")
async def test_response_written_one_byte_at_a_time_is_assembled():
    """A response trickling in one byte per write is put back together."""
    big = json.dumps({"text": "ü∑" * 300}).encode()
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            result = await wire.request("x", ops(out_bytes(answer(big))))
    assert result == json.loads(big)


@pytest.mark.usefixtures("both_ways")
async def test_several_responses_in_one_write_are_all_delivered():
    """Several responses arriving in one write each reach their request."""
    results: dict[int, Any] = {}
    with trio.fail_after(LIMIT):
        async with open_server("3", mode="gather") as wire:

            async def call(n: int) -> None:
                results[n] = await wire.request("x", {"n": n})

            async with trio.open_nursery() as nursery:
                for n in range(3):
                    nursery.start_soon(call, n)
    assert results == {n: {"params": {"n": n}} for n in range(3)}


@pytest.mark.usefixtures("both_ways")
@pytest.mark.parametrize("separate", [False, True], ids=["one-write", "write-each"])
async def test_answers_in_reverse_order_reach_their_requests(separate):
    """50 concurrent requests answered in reverse order each get their own result."""
    count = 50
    results: dict[int, Any] = {}
    extra = ["separate"] if separate else []
    with trio.fail_after(LIMIT):
        async with open_server(str(count), *extra, mode="gather") as wire:

            async def call(n: int) -> None:
                results[n] = await wire.request("x", {"n": n})

            async with trio.open_nursery() as nursery:
                for n in range(count):
                    nursery.start_soon(call, n)
    assert results == {n: {"params": {"n": n}} for n in range(count)}


@pytest.mark.usefixtures("both_ways")
async def test_a_big_pipeline_is_written_by_its_callers_in_batches(monkeypatch):
    """With the pipe tricks, the caller whose request makes the queue ``FLUSH_AT`` long writes it at
    once (the server answers those while the rest are made), and the writer task what is left;
    plain, the writer task writes everything with ``send_all``. Either way each request is written
    once, and gets its own answer."""
    count = 2 * FLUSH_AT + 7
    writes: list[tuple[int, str]] = []

    def recording(fd: int, data: bytes) -> int:
        writes.append((data.count(b"\n"), trio.lowlevel.current_task().name))
        return write_now(fd, data)

    monkeypatch.setattr(process_module, "write_now", recording)
    results: dict[int, Any] = {}
    with trio.fail_after(LIMIT):
        async with open_server(str(count), mode="gather") as wire:
            # The session's own tasks at rest first: then every call below
            # queues its request in one scheduler pass.
            await trio.testing.wait_all_tasks_blocked()

            async def call(n: int) -> None:
                results[n] = await wire.request("x", {"n": n})

            async with trio.open_nursery() as nursery:
                for n in range(count):
                    nursery.start_soon(call, n, name=f"call {n}")
    assert results == {n: {"params": {"n": n}} for n in range(count)}
    if not ProcessChannel.pipe_tricks:
        assert writes == []
        return
    assert sum(size for size, _ in writes) == count
    by_callers = [size for size, task in writes if task.startswith("call ") and size > 1]
    assert by_callers == [FLUSH_AT, FLUSH_AT]


@pytest.mark.usefixtures("both_ways")
async def test_pipelined_requests_longer_than_the_pipe_arrive_whole():
    """Requests of 200 KB each, in flight at once, fill the pipe: what it does not take at once
    waits for room, in order, and nothing is interleaved or lost."""
    count = 5
    results: dict[int, Any] = {}
    with trio.fail_after(LIMIT):
        async with open_server(str(count), mode="gather") as wire:

            async def call(n: int) -> None:
                results[n] = await wire.request("x", {"n": n, "blob": str(n) * 200_000})

            async with trio.open_nursery() as nursery:
                for n in range(count):
                    nursery.start_soon(call, n)
    assert results == {n: {"params": {"n": n, "blob": str(n) * 200_000}} for n in range(count)}


# ------------------------------------------------------------ oversized lines


@pytest.mark.usefixtures("both_ways")
@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":@ID@,"result":{"blob":"' + b"x" * 10_000 + b'"}}\n',
        b'{"jsonrpc":"2.0","result":{"blob":"' + b"x" * 10_000 + b'"},"id":@ID@}\n',
    ],
    ids=["id-first", "id-last"],
)
async def test_oversized_answer_fails_its_request_with_message_too_large(data):
    """A response over ``max_message_bytes`` is discarded and reported; the
    request it answered fails with `MessageTooLarge`; the next one works."""
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with open_server(max_message_bytes=4096, on_log=logs.append) as wire:
            with pytest.raises(MessageTooLarge) as info:
                await wire.request("big", ops(out(data)))
            assert isinstance(info.value, ProtocolError)
            assert info.value.limit == 4096
            assert info.value.size > 4096
            assert any("discarded" in entry for entry in logs)
            assert (await wire.request("next"))["method"] == "next"


async def test_oversized_line_without_an_id_is_dropped_and_reported():
    """A long non-JSON line over the limit is discarded and reported; the
    request after it in the stream still gets its answer."""
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with open_server(max_message_bytes=4096, on_log=logs.append) as wire:
            result = await wire.request("x", ops(out(b"banner " * 2000 + b"\n")))
    assert result["method"] == "x"
    assert any("discarded" in entry for entry in logs)


# ------------------------------------------------------ lines that are not JSON-RPC


NOISE = {
    "banner": b"Starting my MCP server v1.2.3 ...\n",
    "progress-bar": b"Loading  10%\rLoading  50%\rLoading 100%\r\n",
    "invalid-json": b'{"jsonrpc":"2.0","id":\n',
    "invalid-utf8": b"\xff\xfe\xfd garbage \xc3\x28\n",
    "invalid-utf8-in-json": b'{"jsonrpc":"2.0","method":"x","params":{"s":"\xff"}}\n',
    "log-object": b'{"level":"info","msg":"x"}\n',
    "number": b"42\n",
    "string": b'"hello"\n',
    "null": b"null\n",
    "array-of-numbers": b"[1,2,3]\n",
    "empty-array": b"[]\n",
    "deep-arrays": b"[" * 100_000 + b"\n",
    "deep-objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
    "content-length": b"Content-Length: 42\r\n",
}


@pytest.mark.parametrize("noise", NOISE.values(), ids=NOISE.keys())
async def test_lines_that_are_not_json_rpc_are_dropped_and_reported(noise):
    """Lines that are not JSON-RPC are dropped and reported through
    ``on_log``; the request they are interleaved with succeeds, and the
    connection keeps working."""
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with open_server(on_log=logs.append) as wire:
            result = await wire.request("x", ops(out(noise), out(noise + answer() + noise)))
            assert result == {"ok": True}
            assert len(logs) >= 2
            assert (await wire.request("next"))["method"] == "next"


@pytest.mark.parametrize("other_id", [b"424242", b'"nope"', b"null"])
async def test_responses_with_unknown_ids_are_dropped_and_reported(other_id):
    """A response whose id matches no request in flight is dropped and
    reported; the real answer still arrives."""
    logs: list[str] = []
    stray = b'{"jsonrpc":"2.0","id":' + other_id + b',"error":{"code":-1,"message":"stray"}}\n'
    with trio.fail_after(LIMIT):
        async with open_server(on_log=logs.append) as wire:
            result = await wire.request("x", ops(out(stray)))
    assert result["method"] == "x"
    assert any(entry.startswith("dropped") for entry in logs)


async def test_error_answer_raises_rpc_error():
    """A JSON-RPC error answer raises `RpcError` with its code, message and data."""
    error = b'{"code":-32602,"message":"bad params","data":{"field":"name"}}'
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            with pytest.raises(RpcError) as info:
                await wire.request("x", ops(out(b'{"jsonrpc":"2.0","id":@ID@,"error":' + error + b"}\n")))
            assert (info.value.code, info.value.message, info.value.data) == (
                -32602,
                "bad params",
                {"field": "name"},
            )
            assert (await wire.request("next"))["method"] == "next"


async def test_answer_with_both_result_and_error_fails_only_that_request():
    """A response with both ``result`` and ``error`` raises `ProtocolError`
    for that request only; the next request works."""
    both = b'{"jsonrpc":"2.0","id":@ID@,"result":{},"error":{"code":1,"message":"m"}}\n'
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            with pytest.raises(ProtocolError) as info:
                await wire.request("x", ops(out(both)))
            assert not isinstance(info.value, RpcError)
            assert (await wire.request("next"))["method"] == "next"


async def test_statistics_count_what_crossed_the_wire():
    """``statistics()`` counts requests sent, notifications received and lines dropped."""
    with trio.fail_after(LIMIT):
        async with open_server(on_log=lambda _: None) as wire:
            await wire.request("x", ops(out(b"banner\n" + note() + b"42\n" + note())))
            stats = wire.statistics()
    assert stats.pid is not None
    assert stats.requests_sent == 1
    assert stats.requests_in_flight == 0
    assert stats.notifications_received == 2
    assert stats.messages_dropped == 2


# ---------------------------------------------- a lone request reads its answer


@pytest.mark.usefixtures("held_lease")
async def test_a_lone_request_with_request_timeout_reads_its_own_answer():
    """With ``request_timeout`` set, a request alone in flight still reads its
    answer itself: it does not wait for the reader task to take stdout back."""
    with trio.fail_after(LIMIT):
        async with open_server(request_timeout=30) as wire:
            for n in range(5):
                assert await wire.request("x", ops(out(answer(b'{"n":%d}' % n)))) == {"n": n}


@pytest.mark.usefixtures("held_lease")
async def test_a_lone_request_with_a_callback_reads_its_own_answer_and_notifications():
    """A request alone in flight with ``on_notification`` reads what comes
    itself, the notifications before its answer too, each given to the
    callback in order."""
    got: list[int] = []
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            assert await wire.request("first", ops(out(answer()))) == {"ok": True}
            for n in range(3):
                notes = note(index=2 * n) + note(index=2 * n + 1)
                params = ops(out(notes), out(answer()))
                result = await wire.request(
                    "x", params, on_notification=lambda m: got.append(m["params"]["index"])
                )
                assert result == {"ok": True}
            assert got == list(range(6))


@pytest.mark.usefixtures("held_lease")
async def test_a_lone_request_reading_its_own_answer_still_times_out():
    """The request's own deadline ends its read: `RequestTimeout`, and the
    next request is answered (the reader task reads again)."""
    with trio.fail_after(LIMIT):
        async with open_server(request_timeout=0.5) as wire:
            assert await wire.request("first", ops(out(answer()))) == {"ok": True}
            with pytest.raises(RequestTimeout):
                await wire.request("held", ops(HOLD))
            assert await wire.request("next", ops(out(answer(b'{"n":1}')))) == {"n": 1}


# ------------------------------------------------------------- notifications


async def test_notifications_before_the_answer_reach_the_request_callback_first():
    """With one request in flight, its ``on_notification`` gets every
    notification that preceded its answer, in order, before it returns."""
    got: list[dict[str, Any]] = []
    notes = b"".join(note(index=n) for n in range(5))
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            await wire.request("x", ops(out(notes)), on_notification=got.append)
            assert [message["params"]["index"] for message in got] == list(range(5))


async def test_async_request_callback_is_awaited_before_the_request_returns():
    """An async per-request callback is awaited for each notification before
    ``request`` returns."""
    got: list[int] = []

    async def callback(message):
        await trio.lowlevel.checkpoint()
        got.append(message["params"]["index"])

    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            await wire.request("x", ops(out(note(index=1) + note(index=2))), on_notification=callback)
            assert got == [1, 2]


async def test_progress_token_routes_to_the_request_that_named_it():
    """``params.progressToken`` routes a notification to the request whose
    ``params._meta.progressToken`` it names, with other requests in flight."""
    sink: list[dict[str, Any]] = []
    got_a: list[dict[str, Any]] = []
    got_b: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    with trio.fail_after(LIMIT):
        # A sink of its own, so that "a"'s callback is not also the sink.
        async with open_server(on_notification=sink.append) as wire:
            async with trio.open_nursery() as nursery:
                await start_held(nursery, wire, results, "a", token="ta", on_notification=got_a.append)
                await wire.request(
                    "b",
                    ops(
                        out(progress("tb", 1) + progress("ta", 2) + progress("tb", 3)),
                        ANSWER_HELD,
                        _meta={"progressToken": "tb"},
                    ),
                    on_notification=got_b.append,
                )
    assert [m["params"]["progress"] for m in got_a] == [2]
    assert [m["params"]["progress"] for m in got_b] == [1, 3]
    assert sink == []
    assert results["a"]["method"] == "a"


async def test_subscription_id_routes_to_the_request_it_names():
    """``params._meta["io.modelcontextprotocol/subscriptionId"]`` naming a
    request in flight routes the notification to that request."""
    sink: list[dict[str, Any]] = []
    got_a: list[dict[str, Any]] = []
    got_b: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    updated = (
        b'{"jsonrpc":"2.0","method":"notifications/resources/updated",'
        b'"params":{"uri":"u","_meta":{"' + SUBSCRIPTION_ID.encode() + b'":@HELD0@}}}\n'
    )
    with trio.fail_after(LIMIT):
        # A sink of its own, so that "a"'s callback is not also the sink.
        async with open_server(on_notification=sink.append) as wire:
            async with trio.open_nursery() as nursery:
                await start_held(nursery, wire, results, "a", on_notification=got_a.append)
                await wire.request("b", ops(out(updated), ANSWER_HELD), on_notification=got_b.append)
    assert [m["params"]["uri"] for m in got_a] == ["u"]
    assert got_b == sink == []
    assert results["a"]["method"] == "a"


async def test_unclaimed_notification_goes_to_the_first_callback_ever_given():
    """With two requests in flight and nothing naming either, a notification
    goes to the connection-wide sink: without ``on_notification`` on the
    transport, that is the first callback the transport was handed. It is
    delivered exactly once."""
    got_a = Collector()
    got_b: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            async with trio.open_nursery() as nursery:
                await start_held(nursery, wire, results, "a", on_notification=got_a.append)
                await wire.request(
                    "b", ops(out(note(which="loose")), ANSWER_HELD), on_notification=got_b.append
                )
            await got_a.wait_len(1)
            await trio.testing.wait_all_tasks_blocked()
    assert [m["params"] for m in got_a] == [{"which": "loose"}]
    assert got_b == []


async def test_unclaimed_notification_goes_to_the_transport_sink():
    """With ``on_notification`` given to `open_session` (`SessionOptions`), notifications
    no request claims go there, not to any request's callback."""
    sink = Collector()
    got_a: list[dict[str, Any]] = []
    got_b: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    with trio.fail_after(LIMIT):
        async with open_server(on_notification=sink.append) as wire:
            async with trio.open_nursery() as nursery:
                await start_held(nursery, wire, results, "a", on_notification=got_a.append)
                await wire.request(
                    "b", ops(out(note(which="loose")), ANSWER_HELD), on_notification=got_b.append
                )
            await sink.wait_len(1)
            await trio.testing.wait_all_tasks_blocked()
    assert [m["params"] for m in sink] == [{"which": "loose"}]
    assert got_a == got_b == []


async def test_single_request_without_callback_leaves_notifications_to_the_sink():
    """A request that asked for no notifications does not take them: with it
    alone in flight, they go to the transport's sink."""
    sink = Collector()
    with trio.fail_after(LIMIT):
        async with open_server(on_notification=sink.append) as wire:
            await wire.request("x", ops(out(note(n=1) + note(n=2))))
            await sink.wait_len(2)
    assert [m["params"]["n"] for m in sink] == [1, 2]


async def test_single_request_callback_takes_notifications_exactly_once():
    """A request alone in flight with a callback takes unnamed notifications;
    the transport's sink does not get them as well."""
    sink = Collector()
    got: list[dict[str, Any]] = []
    with trio.fail_after(LIMIT):
        async with open_server(on_notification=sink.append) as wire:
            await wire.request("x", ops(out(note(n=1) + note(n=2))), on_notification=got.append)
            await trio.testing.wait_all_tasks_blocked()
            assert [m["params"]["n"] for m in got] == [1, 2]
            assert sink == []


async def test_notification_naming_an_unknown_token_goes_to_the_sink():
    """A notification naming a progress token no request in flight has goes
    to the sink, even when a single request with a callback is in flight."""
    sink = Collector()
    got: list[dict[str, Any]] = []
    with trio.fail_after(LIMIT):
        async with open_server(on_notification=sink.append) as wire:
            await wire.request("x", ops(out(progress("stale"))), on_notification=got.append)
            await sink.wait_len(1)
    assert [m["params"]["progressToken"] for m in sink] == ["stale"]
    assert got == []


async def test_every_subscriber_sees_every_notification():
    """Two ``notifications()`` subscribers both see all notifications, also
    those routed to a request's callback."""
    got: list[dict[str, Any]] = []
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            async with wire.notifications() as first, wire.notifications() as second:
                await wire.request(
                    "x",
                    ops(out(note(n=1) + progress("t", 2) + note(n=3)), _meta={"progressToken": "t"}),
                    on_notification=got.append,
                )
                seen_first = await take(first, 3)
                seen_second = await take(second, 3)
    assert seen_first == seen_second
    assert [m["method"] for m in seen_first] == [
        "notifications/message",
        "notifications/progress",
        "notifications/message",
    ]
    assert len(got) == 3


async def test_a_full_subscriber_does_not_stall_the_reader():
    """A subscriber whose buffer is full misses notifications (counted in
    ``dropped`` and reported through ``on_log``) but never stalls responses."""
    logs: list[str] = []
    with trio.fail_after(LIMIT):
        async with open_server(on_log=logs.append) as wire:
            stream = wire.notifications(buffer=1)
            flood = b"".join(note(n=n) for n in range(100))
            assert (await wire.request("x", ops(out(flood))))["method"] == "x"
            assert stream.dropped == 99
            assert any("subscriber is full" in entry for entry in logs)
            first = await take(stream, 1)
            await stream.aclose()
    assert first[0]["params"] == {"n": 0}


async def test_a_slow_callback_does_not_stall_other_requests():
    """A request's callback that is still running does not hold back the
    answers to other requests, nor lose its own request's answer."""
    entered = trio.Event()
    release = trio.Event()
    got_a: list[dict[str, Any]] = []
    results: dict[str, Any] = {}

    async def slow(message):
        got_a.append(message)
        entered.set()
        await release.wait()

    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            async with trio.open_nursery() as nursery:
                await start_held(nursery, wire, results, "a", token="ta", on_notification=slow)
                await wire.request("b1", ops(out(progress("ta"))))
                await entered.wait()
                # The answer to "a" comes first on the wire, then the one to "b2".
                assert (await wire.request("b2", ops(ANSWER_HELD)))["method"] == "b2"
                assert "a" not in results
                release.set()
    assert results["a"]["method"] == "a"
    assert len(got_a) == 1


# ------------------------------------------------------------ server requests


async def test_server_ping_is_answered():
    """A server's ``ping`` request gets an empty result with its own id."""
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            result = await wire.request("x", ops(ask({"jsonrpc": "2.0", "id": "s1", "method": "ping"})))
    assert result["replies"] == [{"jsonrpc": "2.0", "id": "s1", "result": {}}]


async def test_server_request_without_handler_gets_method_not_found():
    """Without ``on_request``, a server request is refused with -32601 and
    ``on_log`` says so."""
    logs: list[str] = []
    sampling = {"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {"messages": []}}
    with trio.fail_after(LIMIT):
        async with open_server(on_log=logs.append) as wire:
            result = await wire.request("x", ops(ask(sampling)))
    (reply,) = result["replies"]
    assert reply["id"] == "s2"
    assert reply["error"]["code"] == -32601
    assert "result" not in reply
    assert any("sampling/createMessage" in entry for entry in logs)


async def test_server_request_is_answered_by_the_handler():
    """With ``on_request``, a server request gets the handler's result; the
    handler sees its method and params."""
    seen: list[tuple[str, Any]] = []

    async def handler(method, params):
        seen.append((method, params))
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}}

    sampling = {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {"maxTokens": 5}}
    with trio.fail_after(LIMIT):
        async with open_server(on_request=handler) as wire:
            result = await wire.request("x", ops(ask(sampling)))
    assert seen == [("sampling/createMessage", {"maxTokens": 5})]
    assert result["replies"] == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}},
        }
    ]


async def test_handler_raising_rpc_error_gives_an_error_answer():
    """A handler raising ``RpcError(-32000, "nope")`` answers with that error."""

    async def handler(method, params):
        raise RpcError(-32000, "nope")

    with trio.fail_after(LIMIT):
        async with open_server(on_request=handler) as wire:
            result = await wire.request("x", ops(ask({"jsonrpc": "2.0", "id": "s3", "method": "roots/list"})))
    (reply,) = result["replies"]
    assert reply["id"] == "s3"
    assert reply["error"]["code"] == -32000
    assert reply["error"]["message"] == "nope"


@pytest.mark.parametrize("method", ["ping", "roots/list"])
async def test_server_ids_equal_to_ours_do_not_confuse_correlation(method):
    """A server request reusing the id of our request in flight is answered
    as the server's request, and our request still gets its own answer."""

    async def handler(method, params):
        return {"roots": []}

    request = b'{"jsonrpc":"2.0","id":@ID@,"method":"' + method.encode() + b'"}\n'
    with trio.fail_after(LIMIT):
        async with open_server(on_request=handler) as wire:
            await wire.request("warm-up")
            result = await wire.request("x", ops(ask(request)))
    assert result["method"] == "x"
    (reply,) = result["replies"]
    assert reply["id"] == 2
    assert reply["result"] == ({} if method == "ping" else {"roots": []})


# -------------------------------------------------------------------- stderr


async def test_a_flood_on_stderr_does_not_block():
    """A server writing 1 MiB to stderr before answering is not blocked:
    stderr is always drained, and every line reaches ``on_stderr``."""
    lines = Collector()
    with trio.fail_after(LIMIT):
        async with open_server(on_stderr=lines.append) as wire:
            assert (await wire.request("x", ops(err(b"e" * 1023 + b"\n", 1024))))["method"] == "x"
            await lines.wait_len(1024)
    assert set(lines) == {"e" * 1023}


async def test_stderr_lines_are_decoded_leniently_without_newline():
    """``on_stderr`` gets each line without its newline, invalid UTF-8
    replaced by U+FFFD."""
    lines = Collector()
    with trio.fail_after(LIMIT):
        async with open_server(on_stderr=lines.append) as wire:
            await wire.request("x", ops(err(b"hello\nbad \xff byte\n\xc3\xa9t\xc3\xa9\nlast\n")))
            await lines.wait_len(4)
    assert lines == ["hello", "bad \ufffd byte", "été", "last"]


async def test_a_huge_stderr_line_is_cut_into_bounded_pieces():
    """A 200 KiB stderr line without a newline reaches ``on_stderr`` whole,
    cut into pieces of at most 64 KiB."""
    size = 200 * 1024
    pieces = Collector()
    with trio.fail_after(LIMIT):
        async with open_server(on_stderr=pieces.append, on_log=lambda _: None) as wire:
            await wire.request("x", ops(err(b"y" * size), RESPOND, ["exit", 0]))
            await pieces.wait_until(lambda items: sum(map(len, items)) >= size)
    assert "".join(pieces) == "y" * size
    assert max(map(len, pieces)) <= 64 * 1024
    assert len(pieces) >= 4


async def test_default_stderr_handler_logs_at_debug(caplog):
    """Without ``on_stderr``, each stderr line is logged to ``trio_mcp.server`` at DEBUG."""
    caplog.set_level(logging.DEBUG, logger="trio_mcp.server")
    handler = CollectingHandler()
    logger = logging.getLogger("trio_mcp.server")
    logger.addHandler(handler)
    try:
        with trio.fail_after(LIMIT):
            async with open_server() as wire:
                await wire.request("x", ops(err(b"hello from stderr\n")))
                await handler.records.wait_len(1)
    finally:
        logger.removeHandler(handler)
    (record,) = [r for r in caplog.records if r.name == "trio_mcp.server"]
    assert record.levelno == logging.DEBUG
    assert record.getMessage() == "hello from stderr"


# -------------------------------------------------------------------- notify


async def test_notify_writes_a_notification_line():
    """``notify`` writes one notification line: method, and params when given."""
    with trio.fail_after(LIMIT):
        async with open_server() as wire:
            await wire.notify("notifications/initialized")
            await wire.notify("notifications/roots/list_changed", {"n": 1})
            result = await wire.request("x")
    assert result["notes"] == [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"n": 1}},
    ]

"""Targets (``trio_mcp._targets``): where a server is, as frozen, checked values.

Each target checks its parameters as it is built; a configuration entry makes
its target in one place (``spec_target``); the openers take any target, and a
process target's ``shown_as`` is what messages show of it.
"""

from __future__ import annotations

import inspect
import math
import sys

import attrs
import pytest
import trio
import trio.testing

import trio_mcp
from trio_mcp import ConfigError, ServerSpec
from trio_mcp._targets import spec_target

LIMIT = 20


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: trio_mcp.ProcessTarget(42), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", "--one-string"), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", [1]), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", env={"A": 1}), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", cwd=3), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", kill_grace=-1), ValueError),
        (lambda: trio_mcp.ProcessTarget("srv", kill_grace=math.nan), ValueError),
        (lambda: trio_mcp.ProcessTarget("srv", kill_grace="2"), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", stderr_tail_bytes=-1), ValueError),
        (lambda: trio_mcp.ProcessTarget("srv", on_stderr="print"), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", shown_as="srv --x"), TypeError),
        (lambda: trio_mcp.ProcessTarget("srv", restart_after_probe_death=1), TypeError),
        (lambda: trio_mcp.HTTPTarget("ftp://example.com/mcp"), ValueError),
        (lambda: trio_mcp.HTTPTarget("https:///mcp"), ValueError),
        (lambda: trio_mcp.HTTPTarget(b"https://example.com/mcp"), TypeError),
        (lambda: trio_mcp.HTTPTarget("https://example.com/mcp", headers={"A": 1}), TypeError),
        (lambda: trio_mcp.HTTPTarget("https://example.com/mcp", trust_env="no"), TypeError),
        (lambda: trio_mcp.ClientOptions(probe_timeout=0), ValueError),
        (lambda: trio_mcp.SessionOptions(on_request="x"), TypeError),
    ],
)
def test_a_bad_parameter_is_refused_as_the_target_is_built(make, error):
    with pytest.raises(error):
        make()


def test_targets_are_frozen_values():
    target = trio_mcp.ProcessTarget("srv", ["--stdio"], env={"A": "1"})
    assert target == trio_mcp.ProcessTarget("srv", ("--stdio",), env={"A": "1"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        target.command = "other"  # type: ignore[misc]
    assert attrs.evolve(target, kill_grace=0).kill_grace == 0


def test_a_repr_shows_no_argument_nor_secret():
    target = trio_mcp.ProcessTarget("srv", ["--token", "s3cret"], shown_as=["srv", "--token", "${TOKEN}"])
    assert "s3cret" not in repr(target)
    remote = trio_mcp.HTTPTarget("https://user:pw@example.com/mcp?key=s3cret", headers={"A": "s3cret"})
    assert "s3cret" not in repr(remote)
    assert "pw" not in repr(remote)


def test_an_entry_makes_its_target():
    entry = ServerSpec(
        name="x", command="node", args=["index.js"], env={"A": "1"}, inherit_env=False, cwd="/srv"
    )
    assert spec_target(entry) == trio_mcp.ProcessTarget(
        "node", ["index.js"], env={"A": "1"}, inherit_env=False, cwd="/srv"
    )
    remote = ServerSpec(name="z", transport="sse", url="https://x/mcp", headers={"A": "b"})
    assert spec_target(remote) == trio_mcp.HTTPTarget("https://x/mcp", headers={"A": "b"})
    with pytest.raises(ConfigError, match="no command"):
        spec_target(ServerSpec(name="w"))
    with pytest.raises(ConfigError, match="no url"):
        spec_target(ServerSpec(name="v", transport="http"))


def test_only_a_process_may_be_started_again_after_a_death_on_the_probe():
    assert trio_mcp.ProcessTarget("x").restart_after_probe_death is True
    assert trio_mcp.ProcessTarget("x", restart_after_probe_death=False).restart_after_probe_death is False
    assert trio_mcp.StreamTarget(trio.testing.memory_stream_pair()[0]).restart_after_probe_death is False
    assert trio_mcp.HTTPTarget("http://127.0.0.1:1/mcp").restart_after_probe_death is False


async def test_the_openers_refuse_what_is_not_a_target():
    with pytest.raises(TypeError, match="ProcessTarget, HTTPTarget or StreamTarget"):
        async with trio_mcp.open_client("my-server"):  # type: ignore[arg-type]
            pass  # pragma: no cover
    with pytest.raises(TypeError, match="must be a ClientOptions"):
        async with trio_mcp.open_client(trio_mcp.ProcessTarget("x"), options=trio_mcp.SessionOptions()):  # type: ignore[arg-type]
            pass  # pragma: no cover
    with pytest.raises(TypeError, match="must be a SessionOptions"):
        async with trio_mcp.open_session(trio_mcp.ProcessTarget("x"), options=trio_mcp.ClientOptions()):  # type: ignore[arg-type]
            pass  # pragma: no cover


async def test_shown_as_is_what_messages_and_errors_show():
    """The real command line may hold a secret; what messages show is the one given as ``shown_as``."""
    target = trio_mcp.ProcessTarget(
        sys.executable, ["-c", "pass", "s3cret"], shown_as=["my-server", "--token", "${TOKEN}"]
    )
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_session(target) as session:
            assert "my-server --token '${TOKEN}'" in session.name
            assert "s3cret" not in session.name
            with pytest.raises(trio_mcp.ServerGone) as caught:
                await session.request("ping")
    assert "s3cret" not in str(caught.value).split("\n", 1)[0]


@pytest.mark.parametrize(
    ("shorthand", "target"),
    [(trio_mcp.open_stdio_client, trio_mcp.ProcessTarget), (trio_mcp.open_http_client, trio_mcp.HTTPTarget)],
)
def test_a_shorthands_keywords_are_its_targets_own_parameters(shorthand, target):
    """``open_stdio_client(..., env=...)`` and ``open_http_client(..., auth=...)`` pass their
    keywords to the target: each is a parameter of the target with the target's default
    (``options`` apart, the client's)."""
    keywords = {
        name: parameter
        for name, parameter in inspect.signature(shorthand).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "options"
    }
    fields = {field.name: field for field in attrs.fields(target)}
    assert keywords
    for name, parameter in keywords.items():
        assert name in fields, f"{shorthand.__name__}({name}=...) is no parameter of {target.__name__}"
        assert parameter.default == fields[name].default


async def test_open_stdio_client_passes_env_and_cwd_to_the_process(tmp_path):
    """The headline call: ``open_stdio_client(command, args, env=..., cwd=...)``."""
    server = [
        "-c",
        (
            "import os, sys, json\n"
            "for line in sys.stdin:\n"
            "    m = json.loads(line)\n"
            "    if 'id' not in m: continue\n"
            "    if m['method'] == 'initialize':\n"
            "        r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {},"
            " 'serverInfo': {'name': os.environ['WHO'] + '@' + os.path.basename(os.getcwd()), 'version': '1'}}\n"
            "    else:\n"
            "        r = {}\n"
            "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        ),
    ]
    (tmp_path / "here").mkdir()
    options = trio_mcp.ClientOptions(protocol="2025-11-25")
    with trio.fail_after(LIMIT):
        async with trio_mcp.open_stdio_client(
            sys.executable, server, options=options, env={"WHO": "me"}, cwd=tmp_path / "here"
        ) as client:
            assert client.server_info.name == "me@here"


#: Every opener, with the options class it takes and the positional arguments of a good call.
OPENERS = [
    (trio_mcp.open_client, trio_mcp.ClientOptions, (trio_mcp.ProcessTarget("srv"),)),
    (trio_mcp.open_session, trio_mcp.SessionOptions, (trio_mcp.ProcessTarget("srv"),)),
    (trio_mcp.open_stdio_client, trio_mcp.ClientOptions, ("srv", ["--stdio"])),
    (trio_mcp.open_http_client, trio_mcp.ClientOptions, ("http://127.0.0.1:1/mcp",)),
    (trio_mcp.connect_client, trio_mcp.ClientOptions, (None, trio_mcp.ProcessTarget("srv"))),
    (trio_mcp.connect_session, trio_mcp.SessionOptions, (None, trio_mcp.ProcessTarget("srv"))),
]


@pytest.mark.parametrize(
    ("opener", "kind", "args"), OPENERS, ids=lambda value: getattr(value, "__name__", "")
)
def test_every_opener_takes_its_options_by_keyword_only(opener, kind, args):
    parameter = inspect.signature(opener).parameters["options"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


async def _opened(opener, *args, **kwargs):
    """Call ``opener`` as its users do: enter a context manager, or await a coroutine."""
    opened = opener(*args, **kwargs)
    if inspect.iscoroutine(opened):
        await opened  # fails as it binds, before the nursery (None here) is used
    else:
        async with opened:  # pragma: no cover - the call itself must fail
            pass


@pytest.mark.parametrize(
    ("opener", "kind", "args"), OPENERS, ids=lambda value: getattr(value, "__name__", "")
)
async def test_an_option_passed_as_a_keyword_names_its_options_class(opener, kind, args):
    """``open_stdio_client("srv", request_timeout=5)`` says how to pass it, before anything starts."""
    with pytest.raises(TypeError) as caught:
        await _opened(opener, *args, request_timeout=5)
    assert str(caught.value) == (
        f"{opener.__name__}(): request_timeout is a {kind.__name__} field:"
        f" pass options={kind.__name__}(request_timeout=5)"
    )
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


async def test_several_options_passed_as_keywords_are_named_together():
    with pytest.raises(TypeError) as caught:
        await _opened(trio_mcp.open_stdio_client, "srv", protocol="2025-11-25", request_timeout=5)
    assert str(caught.value) == (
        "open_stdio_client(): protocol and request_timeout are ClientOptions fields:"
        " pass options=ClientOptions(protocol='2025-11-25', request_timeout=5)"
    )


@pytest.mark.parametrize(
    ("opener", "kind", "args"), OPENERS, ids=lambda value: getattr(value, "__name__", "")
)
async def test_options_passed_by_position_name_the_keyword(opener, kind, args):
    if opener is trio_mcp.open_stdio_client:
        args = args[:2]
    with pytest.raises(
        TypeError, match=rf"options are keyword-only, pass options={kind.__name__}\(\.\.\.\)$"
    ):
        await _opened(opener, *args, kind())


async def test_a_keyword_that_is_no_option_keeps_pythons_own_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'") as caught:
        await _opened(trio_mcp.open_stdio_client, "srv", colour="blue")
    assert "ClientOptions" not in str(caught.value)
    # A session's opener does not take a client's options: Python's own error, too.
    with pytest.raises(TypeError, match="unexpected keyword argument 'protocol'"):
        await _opened(trio_mcp.open_session, trio_mcp.ProcessTarget("srv"), protocol="auto")


def test_connect_openers_stay_coroutine_functions():
    """``nursery.start_soon(trio_mcp.connect_client, ...)`` and introspection see what they are."""
    assert inspect.iscoroutinefunction(trio_mcp.connect_client)
    assert inspect.iscoroutinefunction(trio_mcp.connect_session)

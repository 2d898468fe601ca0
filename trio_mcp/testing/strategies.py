"""Hypothesis strategies for a hostile server, to fuzz an application with `~trio_mcp.testing.FakeServer`.

Real servers misbehave in ways a test suite rarely thinks of: a banner on
stdout, half a message, an answer with the wrong id, a result of the wrong
shape, a crash in the middle of a call. These strategies draw such
behaviour, and `Misbehaviour.play` makes a `~trio_mcp.testing.FakeServer` act it out as the
answer to one request, so that a Hypothesis test can check that your
application survives all of it: ``@given(misbehaviours())`` on a test that
plays each drawn `Misbehaviour` to the request your application makes (the
recipe is in :doc:`testing`, under "Fuzzing your application").

This module needs `Hypothesis <https://hypothesis.readthedocs.io>`__, which
`trio_mcp` does not depend on; ``trio_mcp.testing`` itself does not import
it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs
from hypothesis import strategies as st

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ._request import FakeRequest
    from ._server import FakeServer

__all__ = [
    "Misbehaviour",
    "json_values",
    "malformed_lines",
    "misbehaviours",
    "odd_results",
    "wrong_ids",
]

JSON: TypeAlias = Any

#: The longest text or list a strategy draws: hostile, but cheap to run.
_MAX = 8


def json_values(max_leaves: int = 10) -> SearchStrategy[JSON]:
    """Any JSON value: null, booleans, numbers (huge ones too), strings, lists and objects, nested."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=_MAX),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(st.text(max_size=_MAX), children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


def malformed_lines() -> SearchStrategy[bytes]:
    """Lines a broken server writes to stdout, each ending with a newline.

    Banners and logs, JSON that is not JSON-RPC, truncated JSON, a byte order
    mark, carriage returns, invalid UTF-8, blank lines, JSON-RPC with the
    wrong version or no method, and a batch array.
    """
    banners = st.sampled_from(
        [
            b"Server started on stdio",
            b"INFO: listening",
            b"Content-Length: 120",
            b"\xef\xbb\xbf",
            b"\r",
            b"",
            b"   ",
            b"\xff\xfe\xfd not utf-8",
            b"[]",
            b"null",
            b"42",
            b'"just a string"',
            b'{"jsonrpc": "1.0", "method": "x"}',
            b'{"jsonrpc": "2.0"}',
            b'{"level": "info", "msg": "a structured log line"}',
        ]
    )
    truncated = st.builds(
        lambda text, cut: text.encode()[: max(1, cut)],
        st.just('{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}]}}'),
        st.integers(min_value=1, max_value=60),
    )
    arbitrary = st.binary(max_size=40).map(lambda data: data.replace(b"\n", b" "))
    as_json = json_values().map(lambda value: _dumps(value))
    return st.one_of(banners, truncated, arbitrary, as_json).map(lambda line: line + b"\n")


def wrong_ids() -> SearchStrategy[JSON]:
    """Ids that answer no request: other numbers, strings, null, floats, booleans, objects."""
    return st.one_of(
        st.integers(min_value=10**6, max_value=2**64),
        st.integers(max_value=-1),
        st.text(max_size=_MAX),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )


def odd_results(method: str = "tools/call") -> SearchStrategy[JSON]:
    """Results of the wrong shape for ``method`` (default ``tools/call``), and any JSON value at all.

    For ``tools/call``: content that is not a list, blocks of unknown or
    missing type, text that is not a string, ``isError`` that is not a
    boolean, odd ``structuredContent``; for the lists: items that are not
    objects, names that are not strings, a ``nextCursor`` that is not a
    string.
    """
    anything = json_values()
    if method == "tools/call":
        block = st.one_of(
            st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "audio", "resource", "weird"])}),
            st.fixed_dictionaries({"type": st.just("text"), "text": anything}),
            st.fixed_dictionaries({"type": st.just("image"), "data": anything, "mimeType": anything}),
            anything,
        )
        shaped = st.one_of(
            st.fixed_dictionaries({"content": anything}),
            st.fixed_dictionaries({"content": st.lists(block, max_size=3)}),
            st.fixed_dictionaries(
                {"content": st.lists(block, max_size=2)},
                optional={"isError": anything, "structuredContent": anything, "_meta": anything},
            ),
        )
    else:
        key = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources"}.get(
            method, "items"
        )
        item = st.one_of(
            anything, st.fixed_dictionaries({"name": anything}, optional={"inputSchema": anything})
        )
        shaped = st.one_of(
            st.fixed_dictionaries({key: anything}),
            st.fixed_dictionaries({key: st.lists(item, max_size=3)}, optional={"nextCursor": anything}),
        )
    return st.one_of(shaped, anything)


Ending: TypeAlias = Literal["result", "error", "exit", "silence"]


@attrs.frozen
class Misbehaviour:
    """What a hostile server does to one request, drawn by `misbehaviours`.

    Attributes:
        before: Lines written to stdout before the ending (see `malformed_lines`).
        stray_ids: Answers sent with ids that no request has (see `wrong_ids`).
        stderr: Lines written to stderr.
        ending: How the request ends: ``"result"`` (answered with `result`,
            as it is, whatever its shape), ``"error"`` (answered with an
            error of `error_code` and `error_message`, whatever their
            types), ``"exit"`` (the server dies with `exit_code`) or
            ``"silence"`` (never answered: the client's budgets must end it).
        result: The result of a ``"result"`` ending.
        error_code: The code of an ``"error"`` ending (not always an int).
        error_message: Its message (not always a string).
        exit_code: The exit status of an ``"exit"`` ending.
    """

    before: tuple[bytes, ...] = ()
    stray_ids: tuple[JSON, ...] = ()
    stderr: tuple[str, ...] = ()
    ending: Ending = "result"
    result: JSON = None
    error_code: JSON = -32603
    error_message: JSON = "error"
    exit_code: int = 1

    async def play(self, server: FakeServer, request: FakeRequest) -> None:
        """Act it out as the answer to ``request`` (one the test took with `~trio_mcp.testing.FakeServer.receive_request`).

        Everything goes out as raw bytes or messages, exactly as drawn: the
        fake does not tidy a result up. Returns once it is all written (at
        once for ``"silence"``).
        """
        for line in self.before:
            await server.send_raw(line)
        for stray in self.stray_ids:
            await server.send_message({"jsonrpc": "2.0", "id": stray, "result": {}})
        if self.stderr:
            await server.write_stderr("\n".join(self.stderr))
        if self.ending == "result":
            await server.send_raw(_dumps({"jsonrpc": "2.0", "id": request.id, "result": self.result}) + b"\n")
        elif self.ending == "error":
            error = {"code": self.error_code, "message": self.error_message}
            await server.send_raw(_dumps({"jsonrpc": "2.0", "id": request.id, "error": error}) + b"\n")
        elif self.ending == "exit":
            await server.exit(self.exit_code)


def misbehaviours(method: str = "tools/call") -> SearchStrategy[Misbehaviour]:
    """Hostile answers to one request of ``method``: garbage first, then an odd result, an odd error, a death or silence."""
    return st.builds(
        Misbehaviour,
        before=st.lists(malformed_lines(), max_size=3).map(tuple),
        stray_ids=st.lists(wrong_ids(), max_size=2).map(tuple),
        stderr=st.lists(st.text(max_size=_MAX).map(lambda text: text.replace("\n", " ")), max_size=2).map(
            tuple
        ),
        ending=st.sampled_from(["result", "error", "exit", "silence"]),
        result=odd_results(method),
        error_code=st.one_of(st.integers(min_value=-(2**40), max_value=2**40), json_values(3)),
        error_message=st.one_of(st.text(max_size=_MAX), json_values(3)),
        exit_code=st.integers(min_value=0, max_value=255),
    )


def _dumps(value: JSON) -> bytes:
    """JSON text of ``value``, big integers included (which orjson refuses)."""
    import json

    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")

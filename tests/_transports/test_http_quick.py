"""The quick exchange: heads written and responses read as h11 writes and reads them, or left to h11.

h11 is the oracle: whatever `QuickHead` writes is byte for byte what h11
writes for the same request, and whatever `read_whole` reads, h11 reads to
the same status, reason, headers and body, ending the exchange cleanly with
nothing left over. Everything else is left to h11 (`None`).
"""

from __future__ import annotations

import h11
import pytest
from hypothesis import given, settings, strategies as st

from trio_mcp._transports.http_quick import QuickHead, read_whole

HOST = (b"Host", b"127.0.0.1:8123")
BASE = [HOST, (b"Accept-Encoding", b"gzip, deflate"), (b"Connection", b"keep-alive"), (b"User-Agent", b"x/1")]
PROTOCOL = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-name": "echo",
}


def h11_bytes(method, target, headers, body):
    connection = h11.Connection(h11.CLIENT)
    data = connection.send(h11.Request(method=method, target=target, headers=headers))
    data += connection.send(h11.Data(data=body)) if body else b""
    return data + connection.send(h11.EndOfMessage())


def all_headers(base, protocol, body):
    return [
        *base,
        *[(name.encode(), value.encode()) for name, value in protocol.items()],
        (b"Content-Length", b"%d" % len(body)),
    ]


def test_a_plain_head_is_what_h11_writes():
    body = b'{"jsonrpc":"2.0"}'
    head = QuickHead("POST", b"/mcp?x=1", BASE).head(PROTOCOL, len(body))
    assert head is not None
    assert head + body == h11_bytes("POST", b"/mcp?x=1", all_headers(BASE, PROTOCOL, body), body)


tokens = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz-ABCXYZ0123456789!#$%&'*+.^_`|~", min_size=1, max_size=12
)
names = st.one_of(
    tokens,
    st.lists(st.sampled_from(["mcp-a", ": ", " ", "\r\n", "b", "\n"]), min_size=1, max_size=4).map("".join),
)
values = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=16),
    st.lists(
        st.sampled_from(["a", "b:", " ", "\t", "\r", "\n", "\r\n", "x-y: z", "\x00", "\x7f"]), max_size=6
    ).map("".join),
)


@settings(max_examples=1000)
@given(st.dictionaries(names, values, max_size=6), st.binary(max_size=40))
def test_a_head_it_writes_is_what_h11_writes(protocol, body):
    """Random headers, control characters and stray spaces included: when it writes a head, h11 writes the same."""
    head = QuickHead("POST", b"/mcp", BASE).head(protocol, len(body))
    if head is None:
        return
    assert head + body == h11_bytes("POST", b"/mcp", all_headers(BASE, protocol, body), body)


@pytest.mark.parametrize(
    "protocol",
    [
        {"mcp-name": " echo"},  # a value with a space at its edge
        {"mcp-name": "a\r\nx-injected: 1"},  # a line break in a value
        {"mcp-name": "a\nb", "mcp-method": "c"},  # a bare line feed in a value
        {"mcp-name\nx": "a", "mcp-method": "c"},  # ... in a name
        {"mcp-name": "a\tb"},  # a tab (h11 takes it: it writes it)
        {"mcp name": "echo"},  # a name that is no token
        {"mcp-name": ""},  # an empty value
        {"Transfer-Encoding": "chunked"},
        {"connection": "close"},
        {"Expect": "100-continue"},
        {"upgrade": "websocket"},
        {"host": "elsewhere"},
        {"content-length": "3"},
    ],
)
def test_a_head_that_is_not_plain_is_left_to_h11(protocol):
    assert QuickHead("POST", b"/mcp", BASE).head(protocol, 3) is None


def test_a_header_that_is_not_ascii_is_refused():
    with pytest.raises(UnicodeEncodeError):
        QuickHead("POST", b"/mcp", BASE).head({"mcp-name": "café"}, 3)


@pytest.mark.parametrize(
    "base",
    [
        [],
        [(b"Accept", b"*/*"), HOST],  # Host not first
        [HOST, (b"Connection", b"close")],
        [HOST, (b"Transfer-Encoding", b"chunked")],
        [HOST, (b"X-Bad", b"a\x01b")],
        [HOST, HOST],
    ],
)
def test_fixed_headers_that_are_not_plain_leave_every_head_to_h11(base):
    quick = QuickHead("POST", b"/mcp", base)
    assert not quick.usable
    assert quick.head(PROTOCOL, 3) is None


def test_a_target_that_is_not_plain_leaves_every_head_to_h11():
    assert not QuickHead("POST", b"/m cp", BASE).usable
    assert not QuickHead("PO ST", b"/mcp", BASE).usable


# ------------------------------------------------------------- responses


def h11_reads(data):
    """What h11 reads from ``data`` as the answer to a POST: (status, reason, headers, body, clean end)."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="POST", target=b"/", headers=[HOST, (b"Content-Length", b"0")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(data)
    try:
        head = connection.next_event()
        if not isinstance(head, h11.Response):
            return None
        body = b""
        while isinstance(event := connection.next_event(), h11.Data):
            body += event.data
    except h11.RemoteProtocolError:
        return None
    clean = (
        isinstance(event, h11.EndOfMessage)
        and connection.their_state is h11.DONE
        and not connection.trailing_data[0]
    )
    return head.status_code, head.reason, list(head.headers.raw_items()), body, clean


def response(status=b"200 OK", headers=None, body=b'{"ok":true}'):
    if headers is None:
        headers = [b"Content-Type: application/json", b"Content-Length: %d" % len(body)]
    return b"HTTP/1.1 " + status + b"\r\n" + b"".join(line + b"\r\n" for line in headers) + b"\r\n" + body


def test_a_whole_plain_response_is_read_as_h11_reads_it():
    data = response(
        headers=[
            b"content-type:application/json",
            b"Content-Length:  11 ",
            b"Date: Sun, 06 Dec 2026 12:00:00 GMT",
            b"Connection: keep-alive",
            b"Keep-Alive: timeout=5",
        ]
    )
    quick = read_whole(data)
    assert quick is not None
    assert (quick.status_code, quick.reason, quick.headers, quick.body, True) == h11_reads(data)
    assert quick.body == b'{"ok":true}'


@pytest.mark.parametrize(
    "data",
    [
        response()[:-1],  # the body still coming
        response()[:20],  # the head still coming
        response() + b"HTTP/1.1 200 OK\r\n",  # bytes past the body
        response(headers=[b"Content-Type: application/json"]),  # no length: read to the end
        response(headers=[b"Transfer-Encoding: chunked"], body=b"2\r\nhi\r\n0\r\n\r\n"),
        response(headers=[b"Content-Length: 11", b"Connection: close"]),
        response(headers=[b"Content-Length: 11", b"Content-Length: 11"]),
        response(headers=[b"Content-Length: 11, 11"]),
        response(headers=[b"Content-Length: +11"]),
        response(headers=[b"Content-Length: 11", b" folded"]),
        response(headers=[b"Content-Length: 11", b"X-Latin: caf\xe9"]),
        response(headers=[b"Content-Length: 11", b"X-Empty:"]),
        response(headers=[b"Content-Length: 11", b"Bad Name: x"]),
        response(status=b"204 No Content", headers=[b"Content-Length: 0"], body=b""),
        response(status=b"304 Not Modified", headers=[b"Content-Length: 0"], body=b""),
        response(status=b"100 Continue", headers=[], body=b"") + response(),
        response(status=b"200", body=b'{"ok":true}'),  # no reason phrase
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi",
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",
        b"",
    ],
)
def test_anything_else_is_left_to_h11(data):
    assert read_whole(data) is None


statuses = st.sampled_from(
    [
        b"200 OK",
        b"202 Accepted",
        b"204 No Content",
        b"404 Not Found",
        b"500 Oops",
        b"100 Go",
        b"200",
        b"200 \tOK",
    ]
)
printable = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
plain_lines = st.tuples(tokens, printable, st.sampled_from([":", ": ", ":\t", " :"])).map(
    lambda parts: f"{parts[0]}{parts[2]}{parts[1]}".encode()
)
lines = st.lists(
    st.one_of(
        st.sampled_from(
            [
                b"Content-Type: application/json",
                b"Connection: keep-alive",
                b"Connection: close",
                b"Transfer-Encoding: chunked",
                b"Content-Length: 2",
                b"content-length:2",
                b" folded",
            ]
        ),
        plain_lines,
        st.binary(max_size=20).map(lambda raw: b"X-Any: " + raw),
        st.binary(max_size=20),
    ),
    max_size=5,
)


@st.composite
def responses(draw):
    """Mostly well framed (a true Content-Length somewhere), with hostile lines, bytes past the end, cuts."""
    body = draw(st.binary(max_size=8))
    headers = draw(lines if draw(st.booleans()) else st.lists(plain_lines, max_size=4))
    if draw(st.integers(0, 3)):
        headers.insert(draw(st.integers(0, len(headers))), b"Content-Length: %d" % len(body))
    data = response(draw(st.one_of(st.just(b"200 OK"), statuses)), headers, body)
    if not draw(st.integers(0, 3)):
        data += draw(st.binary(min_size=1, max_size=4))
    if not draw(st.integers(0, 5)):
        data = data[: draw(st.integers(0, len(data)))]
    return data


@settings(max_examples=1000)
@given(responses())
def test_a_response_it_reads_is_what_h11_reads(data):
    """Hostile heads and bodies: when it reads a response, h11 reads the same, ending cleanly."""
    quick = read_whole(data)
    if quick is None:
        return
    assert (quick.status_code, quick.reason, quick.headers, quick.body, True) == h11_reads(data)

"""The connection pool under the HTTP channel's own client, against a real server process.

The server is ``tests/servers/chaos_server.py``, with ``--calm`` (every call
answered with plain JSON) or ``--only NAME`` (every call answered one way).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from functools import partial

import h11
import pytest
import trio
from http_support import HttpServer, send_json
from paths import SERVERS_DIR

httpx2 = pytest.importorskip("httpx2")

from trio_mcp._transports._httpx_client import (  # noqa: E402
    DEFAULT_TIMEOUT,
    DirectIO,
    DirectSend,
    LeanTransport,
    make_client,
    own_client,
    transport_for,
)

CHAOS = SERVERS_DIR / "chaos_server.py"
MODERN = "2026-07-28"
LIMIT = 30


@asynccontextmanager
async def chaos(*args):
    process = await trio.lowlevel.open_process([sys.executable, str(CHAOS), *args], stdout=subprocess.PIPE)
    try:
        with trio.fail_after(LIMIT):
            line = b""
            while not line.endswith(b"\n"):
                line += await process.stdout.receive_some(1)
        assert line.startswith(b"LISTENING "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        process.kill()
        await process.wait()


async def stats(base):
    async with httpx2.AsyncClient(trust_env=False) as http:
        return (await http.get(base + "/stats")).json()


def call(text, request_id=1):
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}},
    }
    headers = {"content-type": "application/json", "mcp-protocol-version": MODERN}
    return {"content": json.dumps(body).encode(), "headers": headers}


def text_of(response):
    return response.json()["result"]["content"][0]["text"]


@asynccontextmanager
async def client_on(transport):
    async with httpx2.AsyncClient(trust_env=False, transport=transport, timeout=10) as http:
        yield http


async def test_one_call_at_a_time_keeps_one_connection():
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                for i in range(20):
                    assert text_of(await http.post(base + "/mcp", **call(f"n{i}", i))) == f"n{i}"
                assert transport.connections == transport.idle_connections == 1
            assert transport.connections == 0
            seen = await stats(base)
        assert seen["accepted"] == 1
        assert seen["open"] == 0


async def test_calls_in_flight_each_have_a_connection_and_leave_it_for_the_next():
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False)
        width = 32
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:

                async def one(i, answers):
                    answers[i] = text_of(await http.post(base + "/mcp", **call(f"n{i}", i)))

                for _ in range(3):
                    answers = {}
                    async with trio.open_nursery() as nursery:
                        for i in range(width):
                            nursery.start_soon(one, i, answers)
                    assert answers == {i: f"n{i}" for i in range(width)}
                    assert transport.connections == transport.idle_connections <= width
                accepted = (await stats(base))["accepted"]
        # Later rounds reuse the first round's connections.
        assert accepted <= width


async def test_bytes_past_a_response_never_answer_the_next_request():
    """The server sends a second, unasked-for response after each answer: the
    connection is not reused, so it never answers the next request."""
    async with chaos("--only", "extra") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                for i in range(10):
                    assert text_of(await http.post(base + "/mcp", **call(f"n{i}", i))) == f"n{i}"
                    assert transport.connections == 0
            assert (await stats(base))["accepted"] == 10


async def test_a_cut_body_is_an_httpx_error_and_the_next_request_works():
    async with chaos("--only", "cut") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                with pytest.raises(httpx2.RemoteProtocolError) as caught:
                    await http.post(base + "/mcp", **call("cut"))
                assert caught.value.__cause__ is not None  # the network's own, kept as the cause
                assert transport.connections == 0
                listed = await http.post(
                    base + "/mcp",
                    content=b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
                    headers={"content-type": "application/json", "mcp-protocol-version": MODERN},
                )
                assert listed.json()["result"]["tools"][0]["name"] == "echo"


async def cancelled_while_reading(http, base):
    """Initialize, then a call whose stream the caller's scope cancels while it is read.

    The server's request comes, and then nothing (it waits for the answer):
    cancelled while reading, as the channel cancels a request.
    """
    headers = {"content-type": "application/json"}
    initialize = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
    answer = await http.post(base + "/mcp", content=initialize, headers=headers)
    session = {"mcp-session-id": answer.headers["mcp-session-id"]}
    body = call("asked", 2)
    with trio.move_on_after(0.5) as scope:
        async with http.stream(
            "POST", base + "/mcp", content=body["content"], headers=headers | session
        ) as response:
            async for chunk in response.aiter_bytes():
                assert b"ping" in chunk
    assert scope.cancelled_caught


async def test_a_cancelled_exchange_closes_its_connection():
    """A stream left half-read by cancellation is closed, never handed to the next request."""
    async with chaos("--only", "ask") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                await cancelled_while_reading(http, base)
                # It was initialize's connection, taken again: now closed, not kept.
                assert transport.connections == transport.idle_connections == 0
            while (await stats(base))["open"]:  # noqa: ASYNC110 - another process
                await trio.sleep(0.05)


@asynccontextmanager
async def channel_client_on(transport):
    """A client timed as the channel's own: no read timeout, so that reads may go direct."""
    async with httpx2.AsyncClient(trust_env=False, transport=transport, timeout=DEFAULT_TIMEOUT) as http:
        yield http


@pytest.mark.parametrize("direct_io", [True, False])
async def test_direct_io_and_the_stream_carry_the_same_bytes(direct_io):
    """`DirectIO` on or off: small calls, a request too big for one write (the rest goes
    through the stream), the socket's descriptor only on plain connections."""
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False, direct_io=direct_io)
        with trio.fail_after(LIMIT):
            async with channel_client_on(transport) as http:
                for i in range(20):
                    assert text_of(await http.post(base + "/mcp", **call(f"n{i}", i))) == f"n{i}"
                big = "x" * (8 * 1024 * 1024)
                assert text_of(await http.post(base + "/mcp", **call(big, 99))) == big
                async with http.stream("POST", base + "/mcp", **call("s", 100)) as response:
                    stream = response.extensions["network_stream"]
                    assert DirectIO.of(stream) is not None
                    await response.aread()
                assert transport.connections == 1
            assert (await stats(base))["accepted"] == 1


async def test_direct_io_reads_a_cut_body_as_an_httpx_error_and_is_cancellable():
    async with chaos("--only", "cut") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with channel_client_on(transport) as http:
                with pytest.raises(httpx2.RemoteProtocolError):
                    await http.post(base + "/mcp", **call("cut"))
                assert transport.connections == 0
    async with chaos("--only", "ask") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with channel_client_on(transport) as http:
                # Waiting on the descriptor is a checkpoint: the cancellation gets through.
                await cancelled_while_reading(http, base)
                assert transport.connections == 0


async def test_an_expired_idle_connection_is_replaced():
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False, keepalive_expiry=0.05)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                await http.post(base + "/mcp", **call("a"))
                await trio.sleep(0.2)
                assert text_of(await http.post(base + "/mcp", **call("b"))) == "b"
                assert transport.connections == 1
            assert (await stats(base))["accepted"] == 2


async def test_idle_connections_not_taken_again_are_closed_in_time():
    """After a burst, one call at a time reuses one connection; the others are
    closed once idle longer than the expiry, not kept open for ever."""
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False, keepalive_expiry=0.3)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                async with trio.open_nursery() as nursery:
                    for i in range(8):
                        nursery.start_soon(partial(http.post, base + "/mcp", **call(f"n{i}", i)))
                assert transport.idle_connections > 1
                for _ in range(12):
                    await http.post(base + "/mcp", **call("again"))
                    await trio.sleep(0.05)
                assert transport.connections == transport.idle_connections == 1
                while (await stats(base))["open"] > 1:  # noqa: ASYNC110 - another process
                    await trio.sleep(0.05)


async def test_nothing_listening_is_a_connect_error():
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    transport = LeanTransport(trust_env=False)
    with trio.fail_after(LIMIT):
        async with client_on(transport) as http:
            with pytest.raises(httpx2.ConnectError):
                await http.post(f"http://127.0.0.1:{port}/mcp", **call("x"))
    assert transport.connections == 0


async def test_an_unsupported_scheme_is_refused():
    async with client_on(LeanTransport(trust_env=False)) as http:
        with pytest.raises(httpx2.UnsupportedProtocol):
            await http.post("ftp://127.0.0.1/mcp", **call("x"))


@pytest.mark.parametrize("trust_env", [False, True])
def test_the_channels_client(monkeypatch, trust_env):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    client = make_client(trust_env=trust_env)
    assert client.timeout == httpx2.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
    assert not client.follow_redirects
    assert client.trust_env == trust_env
    assert isinstance(transport_for(trust_env=trust_env), LeanTransport)


async def test_a_proxy_in_the_environment_still_applies(monkeypatch):
    """httpx2 applies the environment's proxies only without a transport of the
    client's own: then the channel's client keeps httpx2's pool."""
    async with chaos("--calm") as base:
        # The "proxy" is the chaos server itself, which answers whatever the
        # target: a host that does not exist is reached through it, or not at all.
        monkeypatch.setenv("HTTP_PROXY", base)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert transport_for(trust_env=True) is None
        async with make_client(trust_env=True) as client:
            answer = await client.post("http://example.invalid/mcp", **call("via the proxy"))
        assert text_of(answer) == "via the proxy"


# ------------------------------------------------------------- DirectSend

OWN = ("accept", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name")
PROTOCOL = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}
BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}'


@asynccontextmanager
async def recording(cookie=None):
    """A server that records each request and answers it with JSON (setting ``cookie``, if given)."""

    async def answer(request, stream):
        await send_json(stream, {"ok": True}, headers={"set-cookie": cookie} if cookie else None)

    async with trio.open_nursery() as nursery:
        server = HttpServer(answer)
        await server.start(nursery)
        yield server
        nursery.cancel_scope.cancel()


def lean_client(**kwargs):
    transport = LeanTransport(trust_env=False)
    return httpx2.AsyncClient(
        trust_env=False, transport=transport, timeout=DEFAULT_TIMEOUT, **kwargs
    ), transport


async def test_a_direct_request_is_what_the_client_would_send():
    user = {"authorization": "Bearer t", "user-agent": "mine/1", "accept": "mine"}
    # What the channel asks the client for: the user's headers (less the
    # protocol's names), then the protocol's.
    mine = [(k, v) for k, v in user.items() if k not in OWN] + list(PROTOCOL.items())
    with trio.fail_after(LIMIT):
        async with recording() as server:
            client, transport = lean_client()
            async with client:
                direct = DirectSend(client, transport, server.url, httpx2.Headers(user), OWN)
                assert direct.ready(server.url)
                response = await direct.send("POST", PROTOCOL, BODY)
                assert (await response.aread()) == b'{"ok": true}'
                await response.aclose()
                built = client.build_request("POST", server.url, headers=mine, content=BODY)
                await (await client.send(built)).aclose()
    ours, theirs = server.requests
    assert (
        (ours.method, ours.target, ours.body)
        == (theirs.method, theirs.target, theirs.body)
        == ("POST", "/mcp", BODY)
    )
    assert ours.headers == theirs.headers
    assert ours.headers["user-agent"] == "mine/1"
    assert ours.headers["accept"] == PROTOCOL["accept"]
    assert ours.headers["content-length"] == str(len(BODY))


async def test_direct_sending_stands_aside_where_the_client_must_send():
    url = "http://127.0.0.1:8123/mcp"
    client, transport = lean_client()
    direct = DirectSend(client, transport, url, httpx2.Headers(), OWN)
    assert direct.ready(url)
    assert not direct.ready(url + "/elsewhere")
    with_user_info = "http://user:secret@127.0.0.1:8123/mcp"
    assert not DirectSend(client, transport, with_user_info, httpx2.Headers(), OWN).ready(with_user_info)
    with_auth, transport = lean_client(auth=("user", "secret"))
    assert not DirectSend(with_auth, transport, url, httpx2.Headers(), OWN).ready(url)
    with_cookies, transport = lean_client(cookies={"sticky": "1"})
    assert not DirectSend(with_cookies, transport, url, httpx2.Headers(), OWN).ready(url)
    await client.aclose()
    assert not direct.ready(url)


async def test_cookies_a_direct_response_sets_are_kept_and_then_sent_by_the_client():
    with trio.fail_after(LIMIT):
        async with recording(cookie="sticky=1; Path=/") as server:
            client, transport = lean_client()
            async with client:
                direct = DirectSend(client, transport, server.url, httpx2.Headers(), OWN)
                response = await direct.send("POST", PROTOCOL, BODY)
                await response.aclose()
                assert client.cookies.get("sticky") == "1"
                assert response.request.url == server.url
                # From now on the client sends, with its cookies.
                assert not direct.ready(server.url)
                await (await client.send(client.build_request("POST", server.url, content=BODY))).aclose()
    assert "cookie" not in server.requests[0].headers
    assert server.requests[1].headers["cookie"] == "sticky=1"


async def test_a_header_that_is_not_ascii_is_refused_as_httpx2_refuses_it():
    client, transport = lean_client()
    async with client:
        direct = DirectSend(client, transport, "http://127.0.0.1:8123/mcp", httpx2.Headers(), OWN)
        with pytest.raises(UnicodeEncodeError):
            await direct.send("POST", {**PROTOCOL, "mcp-name": "café"}, BODY)
        with pytest.raises(UnicodeEncodeError):
            client.build_request("POST", "http://127.0.0.1:8123/mcp", headers={"mcp-name": "café"})


def test_the_channels_client_and_its_pool(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    client, transport = own_client(trust_env=False)
    assert isinstance(transport, LeanTransport)
    assert client.timeout == DEFAULT_TIMEOUT
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client, transport = own_client(trust_env=True)
    assert transport is None


async def test_whole_requests_on_the_lean_pool_reuse_one_connection():
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False)
        async with transport:
            url = httpx2.URL(base + "/mcp")
            for i in range(3):
                body = call(f"whole {i}")["content"]
                headers = [
                    (b"Host", url.netloc),
                    *[(k.encode(), v.encode()) for k, v in PROTOCOL.items()],
                    (b"Content-Length", str(len(body)).encode()),
                ]
                response = await transport.send_whole(url, "POST", headers, body, DEFAULT_TIMEOUT.as_dict())
                try:
                    await response.aread()
                finally:
                    await response.aclose()
                assert text_of(response) == f"whole {i}"
            assert transport.connections == 1
        with pytest.raises(httpx2.ConnectError):
            await transport.send_whole(url, "POST", headers, body, DEFAULT_TIMEOUT.as_dict())


async def direct_calls(base, count):
    """``count`` calls sent by a `DirectSend` on a fresh pool: their answers, and the pool."""
    client, transport = lean_client()
    answers = []
    async with client:
        direct = DirectSend(client, transport, base + "/mcp", httpx2.Headers(), OWN)
        for i in range(count):
            response = await direct.send("POST", PROTOCOL, call(f"quick {i}", i)["content"])
            try:
                await response.aread()
            finally:
                await response.aclose()
            answers.append(text_of(response))
        open_after = transport.connections
    return answers, open_after


async def test_a_plain_answer_to_a_direct_request_is_read_without_h11(monkeypatch):
    """The quick exchange: the head written and the whole answer read without h11 (which would fail here)."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("h11 was used")

    async with chaos("--calm") as base:
        with trio.fail_after(LIMIT):
            monkeypatch.setattr(h11.Connection, "send", refuse)
            monkeypatch.setattr(h11.Connection, "next_event", refuse)
            answers, open_after = await direct_calls(base, 5)
            monkeypatch.undo()
            assert answers == [f"quick {i}" for i in range(5)]
            assert open_after == 1
            assert (await stats(base))["accepted"] == 1


@pytest.mark.parametrize("how", ["extra", "sse", "drip"])
async def test_an_answer_that_is_not_plain_is_read_by_h11_after_a_quick_head(how):
    """Bytes past the answer, a chunked event stream, an answer in pieces: h11 reads them,
    told of the request already written; a connection with bytes past its answer is not reused."""
    async with chaos("--only", how) as base:
        with trio.fail_after(LIMIT):
            client, transport = lean_client()
            async with client:
                direct = DirectSend(client, transport, base + "/mcp", httpx2.Headers(), OWN)
                for i in range(3):
                    response = await direct.send("POST", PROTOCOL, call(f"n{i}", i)["content"])
                    try:
                        body = await response.aread()
                    finally:
                        await response.aclose()
                    assert f"n{i}".encode() in body
                    assert transport.connections == (0 if how == "extra" else 1)
            accepted = (await stats(base))["accepted"]
    assert accepted == (3 if how == "extra" else 1)


def self_signed(directory):
    """A certificate for 127.0.0.1 that is its own authority, and its key: their files."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


async def test_a_quick_exchange_over_tls(tmp_path, monkeypatch):
    """Over TLS (the network stream, not the descriptor) plain answers are quick, and one connection carries them."""
    import ssl

    cert_file, key_file = self_signed(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_file, key_file)
    accepted = 0

    async def serve(stream):
        nonlocal accepted
        accepted += 1
        buffer = b""
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = await stream.receive_some()
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(buffer) < length:
                    buffer += await stream.receive_some()
                body, buffer = buffer[:length], buffer[length:]
                text = json.loads(body)["params"]["arguments"]["text"]
                answer = json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"text": text}]}}
                ).encode()
                await stream.send_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                    % (len(answer), answer)
                )

    def refuse(self, *args, **kwargs):
        raise AssertionError("h11 was used")

    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_ssl_over_tcp, serve, 0, server_context, host="127.0.0.1")
        )
        port = listeners[0].transport_listener.socket.getsockname()[1]
        with trio.fail_after(LIMIT):
            transport = LeanTransport(trust_env=True)
            client = httpx2.AsyncClient(transport=transport, timeout=DEFAULT_TIMEOUT, trust_env=True)
            async with client:
                url = f"https://127.0.0.1:{port}/mcp"
                direct = DirectSend(client, transport, url, httpx2.Headers(), OWN)
                monkeypatch.setattr(h11.Connection, "next_event", refuse)
                for i in range(3):
                    response = await direct.send("POST", PROTOCOL, call(f"tls {i}", i)["content"])
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
                    assert text_of(response) == f"tls {i}"
                monkeypatch.undo()
                assert transport.connections == 1
        nursery.cancel_scope.cancel()
    assert accepted == 1


async def test_a_plain_answer_to_a_request_the_client_sent_is_read_without_h11(monkeypatch):
    """The quick exchange's reading half, for requests through the client (an auth, cookies):
    h11 writes the request, the whole plain answer is read without it, the connection is reused."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("h11 read the answer")

    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                monkeypatch.setattr(h11.Connection, "next_event", refuse)
                for i in range(5):
                    response = await http.post(
                        base + "/mcp", auth=httpx2.BasicAuth("u", "p"), **call(f"n{i}", i)
                    )
                    assert text_of(response) == f"n{i}"
                monkeypatch.undo()
                assert transport.connections == 1
            assert (await stats(base))["accepted"] == 1


@pytest.mark.parametrize("quick_read", [True, False])
async def test_a_request_that_closes_its_connection_is_not_read_quick(quick_read):
    """``Connection: close`` asked by the request: its connection carries nothing more, quick reading or not."""
    async with chaos("--calm") as base:
        transport = LeanTransport(trust_env=False, quick_read=quick_read)
        with trio.fail_after(LIMIT):
            async with client_on(transport) as http:
                for i in range(3):
                    request = call(f"n{i}", i)
                    request["headers"]["connection"] = "close"
                    assert text_of(await http.post(base + "/mcp", **request)) == f"n{i}"
                    assert transport.connections == 0
                assert text_of(await http.post(base + "/mcp", **call("kept", 9))) == "kept"
                assert transport.connections == 1
            assert (await stats(base))["accepted"] == 4

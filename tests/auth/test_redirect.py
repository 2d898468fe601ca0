"""The user's part of a login: the loopback listener with real sockets, and the headless paste-back."""

from __future__ import annotations

import io
import socket
import urllib.parse
from collections.abc import Callable

import httpx2
import pytest
import trio
from hypothesis import given, strategies as st

from trio_mcp.auth import PendingRedirect, RedirectHandler
from trio_mcp.auth._redirect import (
    HeadlessRedirect,
    LoopbackRedirect,
    RedirectError,
    check_authorization_url,
)

AUTH_URL = (
    "https://auth.example.com/authorize?response_type=code&client_id=c&state=STATE-123&code_challenge=x"
)


def port_of(uri: str) -> int:
    port = urllib.parse.urlsplit(uri).port
    assert port is not None
    return port


def is_listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


# ------------------------------------------------------------------ URL checks


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/authorize?x=1",
        "http://127.0.0.1:9000/authorize",
        "http://localhost:9000/authorize",
        "http://[::1]:9000/authorize",
        "HTTPS://Auth.Example.com/authorize",
    ],
)
def test_fit_authorization_urls(url: str) -> None:
    assert check_authorization_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://auth.example.com/authorize",  # http to another machine
        "file:///etc/passwd",
        "javascript:alert(1)",
        "/authorize",
        "https:///nohost",
        "https://auth.example.com/authorize\n--flag",
        "https://auth.example.com/a b",
        "https://user:pass@auth.example.com/authorize",
        "http://127.0.0.1.evil.example/authorize",
        "https://auth.example.com:99999/authorize",
        "; open -a Calculator",
    ],
)
def test_unfit_authorization_urls_are_refused(url: str) -> None:
    with pytest.raises(RedirectError, match="refusing"):
        check_authorization_url(url)


def test_the_listener_binds_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback"):
        LoopbackRedirect(host="0.0.0.0")
    with pytest.raises(ValueError, match="loopback"):
        LoopbackRedirect(host="localhost")
    with pytest.raises(ValueError, match="path"):
        LoopbackRedirect(path="callback")


# ------------------------------------------------------------------ loopback, real sockets


async def test_loopback_one_callback_then_closed() -> None:
    opened: list[str] = []
    browser_opened = trio.Event()

    def open_browser(url: str) -> bool:
        opened.append(url)
        trio.from_thread.run_sync(browser_opened.set)
        return True

    out = io.StringIO()
    handler = LoopbackRedirect(open_browser=open_browser, output=out)
    assert isinstance(handler, RedirectHandler)
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            assert isinstance(pending, PendingRedirect)
            uri = pending.redirect_uri
            assert uri.startswith("http://127.0.0.1:")
            assert uri.endswith("/callback")
            port = port_of(uri)
            responses: list[httpx2.Response] = []

            async def user() -> None:
                # The browser opened, the user logged in, the server sent them back.
                await browser_opened.wait()
                # Noise first: another path, another method, the wrong state,
                # no code: none of them ends the wait.
                responses.append(await browser.get(f"http://127.0.0.1:{port}/favicon.ico"))
                responses.append(await browser.post(uri, content=b"code=x&state=STATE-123"))
                responses.append(await browser.get(uri, params={"code": "forged", "state": "WRONG"}))
                responses.append(await browser.get(uri, params={"code": "forged"}))
                responses.append(await browser.get(uri, params={"state": "STATE-123"}))
                responses.append(
                    await browser.get(f"{uri}?code=a&code=b&state=STATE-123")  # repeated: refused
                )
                responses.append(
                    await browser.get(
                        uri, params={"code": "the-code", "state": "STATE-123", "iss": "https://a"}
                    )
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)

            assert dict(params) == {"code": "the-code", "state": "STATE-123", "iss": "https://a"}
            assert [r.status_code for r in responses] == [404, 405, 400, 400, 400, 400, 200]
            assert "You can close this window" in responses[-1].text
            # Nothing of the request is reflected in the page.
            assert "the-code" not in responses[-1].text
            assert responses[-1].headers["cache-control"] == "no-store"
            assert opened == [AUTH_URL]
            assert AUTH_URL in out.getvalue()
            # The one callback is taken: nothing listens any more.
            assert not is_listening(port)
            with pytest.raises(httpx2.ConnectError):
                await browser.get(uri, params={"code": "again", "state": "STATE-123"})
            with pytest.raises(RedirectError, match="already"):
                await pending.complete(AUTH_URL)


async def test_loopback_error_callback_is_returned() -> None:
    handler = LoopbackRedirect(open_browser=None, output=io.StringIO())
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            async with trio.open_nursery() as nursery:

                async def user() -> None:
                    await browser.get(
                        pending.redirect_uri, params={"error": "access_denied", "state": "STATE-123"}
                    )

                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert dict(params) == {"error": "access_denied", "state": "STATE-123"}


async def test_loopback_refusal_without_state_on_the_exact_path_ends_the_login() -> None:
    """Some servers send ``error=access_denied`` without ``state``: it ends this login, nothing else does."""
    handler = LoopbackRedirect(open_browser=None, output=io.StringIO())
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            async with trio.open_nursery() as nursery:

                async def user() -> None:
                    base = pending.redirect_uri
                    other = base.rsplit("/", 1)[0] + "/elsewhere"
                    assert (await browser.get(other, params={"error": "access_denied"})).status_code == 404
                    # A code without the state is still no answer of this login.
                    assert (await browser.get(base, params={"code": "c"})).status_code == 400
                    await browser.get(base, params={"error": "access_denied"})

                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert dict(params) == {"error": "access_denied"}


async def test_headless_takes_a_refusal_without_state() -> None:
    handler = HeadlessRedirect(output=io.StringIO(), read_line=lines("?error=access_denied\n"))
    async with handler.listen() as pending:
        assert dict(await pending.complete(AUTH_URL)) == {"error": "access_denied"}


async def test_loopback_silent_and_broken_connections_do_not_block_the_callback() -> None:
    handler = LoopbackRedirect(open_browser=None, output=io.StringIO())
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            port = port_of(pending.redirect_uri)

            async def user() -> None:
                # A browser's speculative connection that sends nothing, and one
                # that sends garbage and a reset, before the real callback.
                silent = await trio.open_tcp_stream("127.0.0.1", port)
                garbage = await trio.open_tcp_stream("127.0.0.1", port)
                await garbage.send_all(b"\x00\x01 not http at all\r\n\r\n")
                await garbage.aclose()
                huge = await trio.open_tcp_stream("127.0.0.1", port)
                await huge.send_all(b"GET /callback?" + b"a" * 40_000)
                await browser.get(pending.redirect_uri, params={"code": "c", "state": "STATE-123"})
                await silent.aclose()
                await huge.aclose()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert params["code"] == "c"


async def test_loopback_cancelled_closes_the_listener() -> None:
    handler = LoopbackRedirect(open_browser=None, output=io.StringIO())
    with trio.fail_after(20):
        with trio.move_on_after(0.3) as scope:
            async with handler.listen() as pending:
                port = port_of(pending.redirect_uri)
                assert is_listening(port)
                await pending.complete(AUTH_URL)
        assert scope.cancelled_caught
    assert not is_listening(port)


async def test_loopback_refuses_an_unfit_url_before_opening_anything() -> None:
    opened: list[str] = []
    out = io.StringIO()
    handler = LoopbackRedirect(open_browser=opened.append, output=out)
    async with handler.listen() as pending:
        with pytest.raises(RedirectError):
            await pending.complete("http://evil.example.com/authorize?state=x")
    assert opened == []
    assert out.getvalue() == ""


async def test_loopback_a_failing_browser_still_waits_for_the_callback() -> None:
    def broken_browser(url: str) -> bool:
        raise OSError("no display")

    failed = trio.Event()

    class Output(io.StringIO):
        def write(self, text: str) -> int:
            if "could not be opened" in text:
                failed.set()
            return super().write(text)

    out = Output()
    handler = LoopbackRedirect(open_browser=broken_browser, output=out)
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            async with trio.open_nursery() as nursery:

                async def user() -> None:
                    await failed.wait()
                    await browser.get(pending.redirect_uri, params={"code": "c", "state": "STATE-123"})

                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert params["code"] == "c"
    assert "(the browser could not be opened: OSError; open the URL yourself)" in out.getvalue()


async def test_loopback_without_a_browser_says_so_and_waits() -> None:
    said = trio.Event()

    class Output(io.StringIO):
        def write(self, text: str) -> int:
            if "no browser could be opened" in text:
                said.set()
            return super().write(text)

    out = Output()
    handler = LoopbackRedirect(open_browser=lambda url: False, output=out)
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            async with trio.open_nursery() as nursery:

                async def user() -> None:
                    await said.wait()
                    await browser.get(pending.redirect_uri, params={"code": "c", "state": "STATE-123"})

                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert params["code"] == "c"


async def test_loopback_on_ipv6() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("::1 cannot be bound on this machine")
    handler = LoopbackRedirect(host="::1", open_browser=None, output=io.StringIO())
    with trio.fail_after(20):
        async with handler.listen() as pending, httpx2.AsyncClient() as browser:
            assert pending.redirect_uri.startswith("http://[::1]:")
            async with trio.open_nursery() as nursery:

                async def user() -> None:
                    await browser.get(pending.redirect_uri, params={"code": "c", "state": "STATE-123"})

                nursery.start_soon(user)
                params = await pending.complete(AUTH_URL)
    assert params["code"] == "c"


# ------------------------------------------------------------------ headless


def lines(*items: str) -> Callable[[], object]:
    queue = list(items)

    async def read_line() -> str:
        await trio.lowlevel.checkpoint()
        return queue.pop(0) if queue else ""

    return read_line


async def test_headless_reads_the_redirected_url() -> None:
    out = io.StringIO()
    handler = HeadlessRedirect(
        output=out,
        read_line=lines(
            "\n",
            "I don't know what to paste\n",
            "http://127.0.0.1/callback?code=old&state=ANOTHER-LOGIN\n",
            "  http://127.0.0.1/callback?code=the-code&state=STATE-123&iss=https%3A%2F%2Fauth.example.com  \n",
        ),  # type: ignore[arg-type]
    )
    async with handler.listen() as pending:
        assert pending.redirect_uri == "http://127.0.0.1/callback"
        params = await pending.complete(AUTH_URL)
    assert dict(params) == {"code": "the-code", "state": "STATE-123", "iss": "https://auth.example.com"}
    text = out.getvalue()
    assert AUTH_URL in text
    assert "holds no 'code'" in text
    assert "another login" in text


async def test_headless_accepts_a_bare_query_and_errors() -> None:
    handler = HeadlessRedirect(
        output=io.StringIO(), read_line=lines("?error=access_denied&state=STATE-123\n")
    )  # type: ignore[arg-type]
    async with handler.listen() as pending:
        assert dict(await pending.complete(AUTH_URL)) == {"error": "access_denied", "state": "STATE-123"}


async def test_headless_end_of_input_is_a_typed_error() -> None:
    handler = HeadlessRedirect(output=io.StringIO(), read_line=lines("nothing useful\n"))  # type: ignore[arg-type]
    async with handler.listen() as pending:
        with pytest.raises(RedirectError, match="end of input"):
            await pending.complete(AUTH_URL)


async def test_headless_refuses_an_unfit_url_before_printing_it() -> None:
    out = io.StringIO()
    handler = HeadlessRedirect(output=out, read_line=lines("code=x\n"))  # type: ignore[arg-type]
    async with handler.listen() as pending:
        with pytest.raises(RedirectError):
            await pending.complete("http://evil.example.com/authorize")
    assert out.getvalue() == ""


async def test_headless_against_a_real_authorization_endpoint() -> None:
    """The browser is httpx2: GET the authorization URL, take the Location it 302s to, paste it."""

    async def authorize(request: httpx2.Request) -> httpx2.Response:
        query = dict(urllib.parse.parse_qsl(request.url.query.decode()))
        location = f"{query['redirect_uri']}?code=real-code&state={query['state']}"
        return httpx2.Response(302, headers={"location": location})

    pasted: list[str] = []
    seen_url: list[str] = []
    out = io.StringIO()

    async def read_line() -> str:
        # The user opens what was printed, and pastes back where the browser went.
        url = next(line.strip() for line in out.getvalue().splitlines() if line.startswith("  http"))
        seen_url.append(url)
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(authorize)) as browser:
            response = await browser.get(url, follow_redirects=False)
        pasted.append(response.headers["location"])
        return response.headers["location"] + "\n"

    handler = HeadlessRedirect(output=out, read_line=read_line)
    async with handler.listen() as pending:
        url = "http://127.0.0.1:1/authorize?" + urllib.parse.urlencode(
            {"state": "S-9", "redirect_uri": pending.redirect_uri}
        )
        params = await pending.complete(url)
    assert seen_url == [url]
    assert dict(params) == {"code": "real-code", "state": "S-9"}


# ------------------------------------------------------------------ properties

_URL_PIECES = st.sampled_from(
    [
        "https://",
        "http://",
        "HTTP://",
        "file://",
        "javascript:",
        "//",
        "127.0.0.1",
        "[::1]",
        "localhost",
        "evil.example",
        "@",
        ":",
        "/",
        "?",
        "#",
        "%00",
        "\n",
        " ",
        "\x7f",
        "user:pw@",
        ":99999",
        "a",
    ]
)


@given(st.lists(_URL_PIECES, max_size=8).map("".join) | st.text(max_size=60))
def test_check_authorization_url_accepts_only_https_or_loopback_http(url: str) -> None:
    try:
        accepted = check_authorization_url(url)
    except RedirectError:
        return
    assert accepted == url
    split = urllib.parse.urlsplit(url)
    assert split.scheme.lower() in ("https", "http")
    assert split.hostname
    if split.scheme.lower() == "http":
        assert split.hostname in ("localhost", "::1") or split.hostname.startswith("127.")
    assert not any(ch.isspace() or ord(ch) < 0x20 for ch in url)


@given(st.text(max_size=80))
def test_a_pasted_line_never_raises(line: str) -> None:
    from trio_mcp.auth._redirect import _params_from_pasted

    params = _params_from_pasted(line)
    assert params is None or "code" in params or "error" in params

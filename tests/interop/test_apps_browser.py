"""The MCP Apps example host (docs/apps/apps_host.py) in a real browser.

The host serves the app of the official SDK's Apps server to headless
Chromium (Debian's ``chromium`` package); the test drives the browser over
the DevTools protocol (with trio-websocket): the page loads, the app renders
the tool's result (it says so with a log line the host prints), and a real
mouse click on the app's button calls a tool through the bridge, whose
answer the app shows (and logs). Skipped, saying why, without Chromium or
trio-websocket.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "docs" / "apps" / "apps_host.py"
SERVER = Path(__file__).resolve().parent / "servers" / "apps_server.py"
TIMEOUT = 60

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
trio_websocket = pytest.importorskip(
    "trio_websocket", reason="trio-websocket is not installed (the apps extra)"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium: install Debian's chromium package (apt-get install chromium)"
)


class Lines:
    """The lines a child process writes, as they come."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.seen: list[str] = []

    async def until(self, pattern: str) -> re.Match[str]:
        """Read lines until one matches ``pattern``."""
        regex = re.compile(pattern)
        for line in self.seen:
            found = regex.search(line)
            if found:
                return found
        while True:
            while b"\n" not in self.buffer:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise AssertionError(f"the process ended before {pattern!r}; it said: {self.seen}")
                self.buffer += data
            raw, self.buffer = self.buffer.split(b"\n", 1)
            line = raw.decode(errors="replace")
            self.seen.append(line)
            found = regex.search(line)
            if found:
                return found


class DevTools:
    """A DevTools protocol connection: one command at a time, events skipped."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = 0

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        self.ids += 1
        message: dict[str, Any] = {"id": self.ids, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.socket.send_message(json.dumps(message))
        while True:
            answer = json.loads(await self.socket.get_message())
            if answer.get("id") == self.ids:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                return answer["result"]


async def click(cdp: DevTools, session: str, x: float, y: float) -> None:
    """A real left click at (x, y) of the page."""
    for kind in ("mousePressed", "mouseReleased"):
        await cdp.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            session,
        )


async def test_the_example_host_serves_an_app_that_calls_a_tool_from_a_click(
    apps_server, tmp_path: Path
) -> None:
    assert CHROMIUM is not None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    host = await trio.lowlevel.open_process(
        [sys.executable, str(HOST), "--tool", "show_clock", "--", apps_server.command, str(SERVER)],
        stdout=subprocess.PIPE,
        env=env,
    )
    browser = await trio.lowlevel.open_process(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-port=0",
            f"--user-data-dir={tmp_path / 'profile'}",
            "about:blank",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(TIMEOUT):
            assert host.stdout is not None
            assert browser.stderr is not None
            said = Lines(host.stdout)
            url = (await said.until(r"open (http://127\.0\.0\.1:\d+/)")).group(1)
            assert "refused CSP source '*'" in said.seen
            devtools = (await Lines(browser.stderr).until(r"DevTools listening on (ws://\S+)")).group(1)
            async with trio_websocket.open_websocket_url(
                devtools, max_message_size=16 * 1024 * 1024
            ) as socket:
                cdp = DevTools(socket)
                target = (await cdp.send("Target.createTarget", {"url": url}))["targetId"]
                session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
                    "sessionId"
                ]
                # The app rendered the tool's result, through the bridge.
                await said.until(r"^view: rendered: \d{4}-")
                # A real click on its button (at 10,50 in the frame, 120x40; the frame at 0,0).
                # A headless browser may drop input that comes before its first paint of the
                # frame, so the click is repeated until the app answers one.
                while True:
                    await click(cdp, session, 70, 70)
                    with trio.move_on_after(3):
                        # The button called the app-only tool through the bridge, and shows its answer.
                        await said.until(r"^view: refreshed at \d{4}-")
                        break
                shown = await cdp.send(
                    "Runtime.evaluate",
                    {
                        "expression": "document.getElementById('app').getAttribute('sandbox')",
                        "returnByValue": True,
                    },
                    session,
                )
                assert shown["result"]["value"] == "allow-scripts"
                await cdp.send("Target.closeTarget", {"targetId": target})
    finally:
        for process in (browser, host):
            if process.returncode is None:
                process.kill()
        with trio.move_on_after(10):
            await browser.wait()
            await host.wait()


#: Resolves with the text of ``#server-time`` once it holds a time other than ``before``.
TIME_SHOWN = """new Promise((resolve) => {
  const element = document.getElementById("server-time");
  const done = () => /\\d{4}-\\d\\d-\\d\\dT/.test(element.textContent) && element.textContent !== BEFORE;
  if (done()) { resolve(element.textContent); return; }
  new MutationObserver(() => { if (done()) resolve(element.textContent); })
    .observe(element, {childList: true, characterData: true, subtree: true});
})"""


async def test_ext_apps_own_example_renders_and_calls_its_tool_through_the_bridge(
    ext_apps_server, tmp_path: Path
) -> None:
    # The view is ext-apps' own (its App class over postMessage), unchanged.
    assert CHROMIUM is not None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    host = await trio.lowlevel.open_process(
        [sys.executable, str(HOST), "--tool", "get-time", "--", *ext_apps_server.cmd],
        stdout=subprocess.PIPE,
        env=env,
    )
    browser = await trio.lowlevel.open_process(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            # The app's frame in the page's process, so that its DOM can be read here.
            "--disable-features=IsolateSandboxedIframes,site-per-process",
            "--disable-site-isolation-trials",
            "--remote-debugging-port=0",
            f"--user-data-dir={tmp_path / 'profile'}",
            "about:blank",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(TIMEOUT):
            assert host.stdout is not None
            assert browser.stderr is not None
            said = Lines(host.stdout)
            url = (await said.until(r"open (http://127\.0\.0\.1:\d+/)")).group(1)
            devtools = (await Lines(browser.stderr).until(r"DevTools listening on (ws://\S+)")).group(1)
            async with trio_websocket.open_websocket_url(
                devtools, max_message_size=16 * 1024 * 1024
            ) as socket:
                cdp = DevTools(socket)
                target = (await cdp.send("Target.createTarget", {"url": url}))["targetId"]
                session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
                    "sessionId"
                ]
                # ext-apps' App finished ui/initialize with the bridge.
                await said.until(r"^view initialized: ")
                tree = await cdp.send("Page.getFrameTree", {}, session)
                frame = tree["frameTree"]["childFrames"][0]["frame"]["id"]
                world = await cdp.send(
                    "Page.createIsolatedWorld", {"frameId": frame, "worldName": "test"}, session
                )

                async def in_frame(expression: str) -> Any:
                    answer = await cdp.send(
                        "Runtime.evaluate",
                        {
                            "expression": expression,
                            "contextId": world["executionContextId"],
                            "awaitPromise": True,
                            "returnByValue": True,
                        },
                        session,
                    )
                    return answer["result"].get("value")

                # The tool's result, pushed by the bridge, is rendered.
                first = await in_frame(TIME_SHOWN.replace("BEFORE", "null"))
                assert first.startswith("20")
                # A real click on "Get Server Time": the app calls get-time through the bridge.
                box = await in_frame(
                    "(() => { const r = document.getElementById('get-time-btn').getBoundingClientRect();"
                    " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
                )
                # Repeated if the browser dropped it (see the test above); a stale answer
                # of a cancelled wait is skipped by its id.
                second = None
                while second is None:
                    await click(cdp, session, box[0], box[1])
                    with trio.move_on_after(3):
                        second = await in_frame(TIME_SHOWN.replace("BEFORE", json.dumps(first)))
                assert second > first
                await cdp.send("Target.closeTarget", {"targetId": target})
    finally:
        for process in (browser, host):
            if process.returncode is None:
                process.kill()
        with trio.move_on_after(10):
            await browser.wait()
            await host.wait()

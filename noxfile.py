"""Development tasks for trio_mcp, run with nox.

``nox`` alone runs the test suite. The other sessions: ``nox -s fuzz``
(Hypothesis property tests at fuzzing size), ``lint``, ``typing``, ``docs``,
``bench``, ``peers`` (installs the MCP servers of the interop tests) and
``conformance`` (the official MCP conformance harness). Add
``-r`` to reuse the virtualenvs of an earlier run, and pass arguments to the
underlying tool after ``--``, e.g. ``nox -s tests -- -k framing -x``.
"""

from __future__ import annotations

import os
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
#: Where the interop tests' MCP servers are installed (tests/interop/peers.py).
PEERS_DIR = Path(os.environ.get("TRIO_MCP_PEERS_DIR") or ROOT / ".peers")


def _extra(name: str) -> list[str]:
    """Return the requirements of one optional-dependency group of pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        extras: dict[str, list[str]] = tomllib.load(f)["project"]["optional-dependencies"]
    return extras[name]


def _run_pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    """Run pytest and fail the session unless at least one test ran.

    ``session.run`` already fails the session on any non-zero exit status,
    including pytest's 5, "no tests collected". A run can still exit 0 with
    nothing tested, when every collected test is skipped; the JUnit XML
    report tells, so read it.
    """
    report = Path(session.create_tmp()) / f"junit-{session.name}.xml"
    session.run("pytest", f"--junitxml={report}", *args, env=env)
    total = skipped = 0
    for suite in ET.parse(report).getroot().iter("testsuite"):
        total += int(suite.get("tests", "0"))
        skipped += int(suite.get("skipped", "0"))
    if total - skipped <= 0:
        session.error(f"no test ran ({total} collected, {skipped} skipped)")
    session.log(f"{total - skipped} tests ran ({skipped} skipped)")


def _install_peers(session: nox.Session, *args: str) -> None:
    """Install the interop peers into PEERS_DIR (seconds the first time, instant afterwards)."""
    session.run("python", "tests/interop/peers.py", "install", str(PEERS_DIR), *args)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite, the interop tests against real MCP servers included.

    The servers are installed first (see the ``peers`` session). Without
    Node.js the two npm servers are left out, and the tests that need them
    are skipped, saying so.
    """
    session.install("-e", ".[test]")
    _install_peers(session, "--lenient")
    _run_pytest(session, *session.posargs, env={"TRIO_MCP_PEERS_DIR": str(PEERS_DIR)})


@nox.session
def peers(session: nox.Session) -> None:
    """Install the MCP servers the interop tests run against (npm and PyPI; pinned).

    Into ``.peers/``, or the folder named by ``TRIO_MCP_PEERS_DIR``. Fails if
    any of them cannot be installed, Node.js missing included.
    """
    _install_peers(session, *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Run the Hypothesis property tests with many more examples.

    Property tests carry the ``property`` marker; the ``fuzz`` profile
    (tests/conftest.py) raises the number of examples per test.
    """
    session.install("-e", ".[test]")
    _run_pytest(session, "-m", "property", *session.posargs, env={"HYPOTHESIS_PROFILE": "fuzz"})


@nox.session
def lint(session: nox.Session) -> None:
    """Check the code with ruff: lint rules and formatting."""
    session.install(*_extra("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    """Type-check the library and this file strictly (configuration in pyproject.toml)."""
    # The http extra: the HTTP transport is checked against httpx2's own types.
    session.install("-e", ".[typing,http,auth]", "nox")
    session.run("mypy", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML documentation, failing on any warning.

    The extras are installed too: the reference documents the HTTP transport
    and the output checks, whose modules import them.
    """
    session.install("-e", ".[docs,http,validation,auth,otel,apps]")
    session.run(
        "sphinx-build", "-W", "-n", "--keep-going", "-b", "html", "docs", "docs/_build/html", *session.posargs
    )


@nox.session
def conformance(session: nox.Session) -> None:
    """Run the official MCP conformance harness against the HTTP client.

    ``tests/conformance/run.py`` installs ``@modelcontextprotocol/conformance``
    (two pinned versions, with npm, into ``.conformance/``) and runs each leg
    of ``tests/conformance/scenarios.toml`` with ``tests/conformance/client.py``
    as the client under test. Every scenario the table judges must show its
    named SUCCESS checks, no FAILURE or WARNING, and the client's exit 0.
    First a self-test: a client that does nothing must fail every judged
    scenario. Arguments go to run.py, e.g. ``-- --leg modern --verbose``.
    Needs Node.js 20 or later.
    """
    session.install("-e", ".[http,validation,auth]")
    session.run("python", "tests/conformance/run.py", "--self-test", *session.posargs)
    session.run("python", "tests/conformance/run.py", *session.posargs)


#: The official Python MCP client that the benchmarks compare against. It is
#: installed into the bench session only, never a dependency of trio_mcp, and
#: pinned: its targets (benchmarks/README.md) are set against this release.
OFFICIAL_MCP_CLIENT = "mcp==2.3.0"


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks: trio_mcp against a raw baseline and the official client.

    Over stdio (``benchmarks/bench.py``), then over Streamable HTTP
    (``benchmarks/http_bench.py``, with the ``http`` extra: against a fast
    Node server, where the client is the bottleneck, when ``node`` is on the
    PATH; then against the Python test server), then server groups
    (``benchmarks/group_bench.py``: 100 servers in one process), then what
    OpenTelemetry costs a call (``benchmarks/telemetry_bench.py``: without
    it, with the API alone, with the SDK recording).
    """
    # httpx (the older line) only as a baseline: the raw client on Trio is
    # measured on both httpx and httpx2, and the faster sets the target.
    session.install(".[validation,http]", OFFICIAL_MCP_CLIENT, "httpx")
    session.run("python", "benchmarks/bench.py", *session.posargs)
    # What the process transport's pipe tricks buy: the same session with them and without.
    session.run("python", "benchmarks/pipes_bench.py", *[arg for arg in session.posargs if arg == "--quick"])
    session.run("python", "benchmarks/http_bench.py", *session.posargs)
    # --quick (20 servers, 5 s of crashes) carries over.
    session.run("python", "benchmarks/group_bench.py", *[arg for arg in session.posargs if arg == "--quick"])
    # What OpenTelemetry costs a call: without it, with the API alone, with the SDK recording.
    session.run("python", "benchmarks/telemetry_bench.py", "--otel", "none")
    session.install(*_extra("otel"))
    session.run("python", "benchmarks/telemetry_bench.py", "--otel", "api")
    session.install("opentelemetry-sdk")
    session.run("python", "benchmarks/telemetry_bench.py", "--otel", "sdk")


@nox.session
def soak(session: nox.Session) -> None:
    """The HTTP soak: 200,000 calls against a chaos server, both eras, every answer checked.

    Not part of the default run, nor of CI: it takes minutes. Only loopback
    traffic, bounded in count and time (``benchmarks/soak.py``; pass its
    options after ``--``, e.g. ``nox -s soak -- --calls 20000``).
    """
    session.install(".[http]")
    session.run("python", "benchmarks/soak.py", *session.posargs)

"""Shared test configuration: the Hypothesis settings profiles, and the in-process HTTP server.

The profile comes from the ``HYPOTHESIS_PROFILE`` environment variable:

* ``dev``: the default on a workstation; quick.
* ``ci``: the default when ``CI`` is set; more examples, no deadline (shared
  CI machines have erratic timing), and a reproduction blob on failure.
* ``fuzz``: what ``nox -s fuzz`` uses; many examples per property.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Test files live in folders that mirror the package (tests/_core/, tests/cli/, ...),
# each a package so that two of the same name do not collide; they import the
# modules of this folder (http_support, paths, ...) by name.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

# Several tests send Ctrl-C (SIGINT) to a command they start. A shell that runs
# the suite in the background, without job control, starts it with SIGINT
# ignored, and an ignored signal stays ignored in every child: then those
# children would rightly ignore the test's Ctrl-C too. Python's own handler
# here makes the children start with the default disposition, as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Each profile starts from Hypothesis's own defaults, not from whatever profile
# is loaded (Hypothesis loads a built-in "ci" profile of its own when CI is set).
_base = settings.get_profile("default")

settings.register_profile("dev", _base, max_examples=100)
settings.register_profile("ci", _base, max_examples=300, deadline=None, print_blob=True)
settings.register_profile(
    "fuzz",
    _base,
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def _load_http_server():
    if "http_server" in sys.modules:
        return sys.modules["http_server"]
    path = Path(__file__).parent / "servers" / "http_server.py"
    spec = importlib.util.spec_from_file_location("http_server", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered first: its dataclasses look their module up while they are built.
    sys.modules["http_server"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def http_server():
    """``tests/servers/http_server.py`` serving in the test's own Trio run: a dual-era
    MCP server over HTTP on a free loopback port, with no fault unless a client asks
    for one (``X-Test-Scenario``). Yields its ``Running``: ``url`` and ``state``."""
    async with _load_http_server().running() as server:
        yield server

"""Fixtures shared by the transport tests."""

from __future__ import annotations

import pytest

from trio_mcp._transports import _pipes


@pytest.fixture
def held_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stdout stays lent to lone requests for the whole test (`_pipes.LEASE`: a minute).

    On a busy machine a caller may be late by more than the real lease; and
    with it held, only a request that reads its own answer gets one.
    """
    monkeypatch.setattr(_pipes, "LEASE", 60.0)

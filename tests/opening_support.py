"""Openers for tests whose helpers take one bag of keywords: the target's and the options' apart.

The library takes a target (where the server is, with its own parameters)
and an options object; a test helper that forwards ``**options`` from many
call sites splits them here, by the fields each class defines.
"""

from __future__ import annotations

from typing import Any

import attrs

import trio_mcp


def _split(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    names = {field.name for field in attrs.fields(cls)}
    return {name: options.pop(name) for name in list(options) if name in names}


def process_client(command: str, args: Any = (), **options: Any):
    """`trio_mcp.open_client` over a `trio_mcp.ProcessTarget`, the keywords split between the two."""
    target = trio_mcp.ProcessTarget(command, args, **_split(trio_mcp.ProcessTarget, options))
    return trio_mcp.open_client(target, options=trio_mcp.ClientOptions(**options))


def process_session(command: str, args: Any = (), **options: Any):
    """`trio_mcp.open_session` over a `trio_mcp.ProcessTarget`, the keywords split between the two."""
    target = trio_mcp.ProcessTarget(command, args, **_split(trio_mcp.ProcessTarget, options))
    return trio_mcp.open_session(target, options=trio_mcp.SessionOptions(**options))


def http_client(url: str, **options: Any):
    """`trio_mcp.open_client` over an `trio_mcp.HTTPTarget`, the keywords split between the two."""
    target = trio_mcp.HTTPTarget(url, **_split(trio_mcp.HTTPTarget, options))
    return trio_mcp.open_client(target, options=trio_mcp.ClientOptions(**options))

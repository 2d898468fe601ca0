"""MCP configuration files: the typed model, and (beside it) the loader."""

from __future__ import annotations

from .spec import (
    ConfigError as ConfigError,
    ConfigSource as ConfigSource,
    LoadedConfig as LoadedConfig,
    ServerSpec as ServerSpec,
)

__all__ = ["ConfigError", "ConfigSource", "LoadedConfig", "ServerSpec"]

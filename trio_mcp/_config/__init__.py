"""MCP configuration files: the typed model, the loader, and where the files are."""

from __future__ import annotations

from .._public import publish
from .discover import (
    ConfigScope as ConfigScope,
    DiscoveredConfig as DiscoveredConfig,
    discover_configs as discover_configs,
)
from .load import load_config as load_config, parse_config as parse_config
from .spec import (
    ConfigError as ConfigError,
    ConfigSource as ConfigSource,
    LoadedConfig as LoadedConfig,
    ServerSpec as ServerSpec,
)

__all__ = [
    "ConfigError",
    "ConfigScope",
    "ConfigSource",
    "DiscoveredConfig",
    "LoadedConfig",
    "ServerSpec",
    "discover_configs",
    "load_config",
    "parse_config",
]


publish(globals())

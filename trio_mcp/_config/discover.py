"""Where MCP configuration files usually are: `discover_configs`.

Discovery only looks: it reads no file and runs nothing. Whether to load a
project's file (which names commands to run) is the caller's decision.
"""

from __future__ import annotations

import os
import pathlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ConfigScope", "DiscoveredConfig", "discover_configs"]

ConfigScope: TypeAlias = Literal["user", "project"]
"""Whose file it is: the user's (all projects), or one project's (checked in, possibly someone else's)."""

#: The project files, by the tool that reads them, relative to a project folder.
_PROJECT_FILES = (
    ("claude-code", ".mcp.json"),
    ("vscode", os.path.join(".vscode", "mcp.json")),
    ("cursor", os.path.join(".cursor", "mcp.json")),
)


@attrs.frozen
class DiscoveredConfig:
    """A place where an MCP client keeps its configuration.

    Attributes:
        path: The file.
        client: The tool that reads it: ``"claude-desktop"``,
            ``"claude-code"``, ``"cursor"``, ``"vscode"`` or ``"windsurf"``.
        scope: ``"user"`` (your own file, for every project) or
            ``"project"`` (a project's file, which may come from a cloned
            repository: it names commands to run, so look before you load it).
        exists: Whether the file is there.
    """

    path: pathlib.Path
    client: str
    scope: ConfigScope
    exists: bool


def _user_files(home: Path, platform: str, environ: Mapping[str, str]) -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    if platform == "darwin":
        support = home / "Library" / "Application Support"
        files.append(("claude-desktop", support / "Claude" / "claude_desktop_config.json"))
        vscode_user = support / "Code" / "User"
    elif platform == "win32":
        appdata = Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
        files.append(("claude-desktop", appdata / "Claude" / "claude_desktop_config.json"))
        vscode_user = appdata / "Code" / "User"
    else:
        config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        # Claude Desktop has no official Linux build; the community builds use this path.
        files.append(("claude-desktop", config / "Claude" / "claude_desktop_config.json"))
        vscode_user = config / "Code" / "User"
    files += [
        ("claude-code", home / ".claude.json"),
        ("cursor", home / ".cursor" / "mcp.json"),
        ("vscode", vscode_user / "mcp.json"),
        ("windsurf", home / ".codeium" / "windsurf" / "mcp_config.json"),
    ]
    return files


def _project_folders(start: Path, home: Path) -> tuple[list[Path], Path]:
    """The folders from ``start`` up to the project's root, outermost first, and that root.

    The root is the first folder with a ``.git``, or ``start`` when there is
    none. The walk stops below the home folder and at the file system's root.
    """
    folders: list[Path] = []
    folder = start
    while folder != home:
        folders.append(folder)
        if (folder / ".git").exists():
            return folders[::-1], folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return folders[::-1], start


def discover_configs(
    start: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    *,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[DiscoveredConfig]:
    """The usual configuration files, the user's first, then the project's, most specific last.

    ::

        found = [d.path for d in trio_mcp.discover_configs() if d.exists]
        config = trio_mcp.load_config(*found)

    In that order, `load_config` lets a project's entry replace the user's
    entry of the same name, as Claude Code and Cursor do. The user's files:
    Claude Desktop's ``claude_desktop_config.json`` (in ``~/Library/Application
    Support/Claude`` on macOS, ``%APPDATA%\\Claude`` on Windows,
    ``~/.config/Claude`` elsewhere), Claude Code's ``~/.claude.json`` (its
    user-scope ``mcpServers``), Cursor's ``~/.cursor/mcp.json``, VS Code's
    user ``mcp.json`` and Windsurf's ``~/.codeium/windsurf/mcp_config.json``.
    The project's: ``.mcp.json`` (Claude Code), ``.vscode/mcp.json`` and
    ``.cursor/mcp.json`` in ``start`` and each folder above it up to the
    project's root (the first folder with a ``.git``), never the home
    folder or above. Project files are listed whether or not they exist in
    the project's root (``start`` when no ``.git`` is found), and elsewhere
    only when they exist; user files are always listed.

    Args:
        start: Where the project search starts (default: the current folder).
        home: The user's home folder (default: ``~``).
        platform: ``sys.platform`` to follow (default: this one's).
        environ: The environment (``APPDATA``, ``XDG_CONFIG_HOME``;
            default: ``os.environ``).
    """
    home_path = Path(os.path.expanduser("~") if home is None else home).absolute()
    start_path = Path(os.getcwd() if start is None else start).absolute()
    platform = sys.platform if platform is None else platform
    environ = os.environ if environ is None else environ
    found: list[DiscoveredConfig] = [
        DiscoveredConfig(path=path, client=client, scope="user", exists=path.is_file())
        for client, path in _user_files(home_path, platform, environ)
    ]
    folders, root = _project_folders(start_path, home_path)
    for folder in folders:
        for client, relative in _PROJECT_FILES:
            path = folder / relative
            exists = path.is_file()
            if exists or folder == root:
                found.append(DiscoveredConfig(path=path, client=client, scope="project", exists=exists))
    return found

"""`load_config` and `parse_config`: configuration files, dicts and JSON text, read into a `LoadedConfig`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .expand import Expander, OnMissing, ResolveInput
from .parse import Document, file_error, parse_document
from .spec import ConfigError, LoadedConfig, ServerSpec
from .text import parse_json, strip_jsonc

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["load_config", "parse_config"]

Overrides = Mapping[str, "ServerSpec | Mapping[str, Any]"]

_ON_MISSING = ("error", "keep", "empty")


def _read_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def _decode(text: str, path: str | None, jsonc: bool | None) -> Any:
    """Decode a document: strict JSON, or JSON with comments where that is allowed.

    ``jsonc=None`` allows comments and trailing commas in a VS Code file
    (one with a ``servers`` map, or under a ``.vscode`` folder) only.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if jsonc:
        try:
            return parse_json(strip_jsonc(text))
        except ValueError as exc:
            raise file_error(path, str(exc)) from None
    try:
        return parse_json(text)
    except ValueError as exc:
        strict_error = exc
    if jsonc is None:
        try:
            value = parse_json(strip_jsonc(text))
        except ValueError:
            pass
        else:
            in_vscode = path is not None and Path(path).parent.name == ".vscode"
            if in_vscode or (isinstance(value, dict) and "servers" in value and "mcpServers" not in value):
                return value
            raise file_error(
                path,
                f"{strict_error} (comments and trailing commas are allowed in VS Code files only; "
                "pass jsonc=True to allow them here)",
            )
    raise file_error(path, str(strict_error))


def _expander(
    *,
    environ: Mapping[str, str] | None,
    variables: Mapping[str, str] | None,
    resolve_input: ResolveInput | None,
    workspace: str | os.PathLike[str] | None,
    user_home: str | os.PathLike[str] | None,
    on_missing: OnMissing,
) -> Expander:
    if on_missing not in _ON_MISSING:
        raise ValueError(f"on_missing must be one of {', '.join(_ON_MISSING)}, not {on_missing!r}")
    if user_home is None:
        home = os.path.expanduser("~")
        user_home = home if home != "~" else None
    return Expander(
        environ=os.environ if environ is None else environ,
        variables=variables,
        user_home=None if user_home is None else os.fspath(user_home),
        workspace=None if workspace is None else os.fspath(workspace),
        resolve_input=resolve_input,
        on_missing=on_missing,
    )


def parse_config(
    data: Mapping[str, Any] | str | bytes,
    *,
    variables: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    resolve_input: ResolveInput | None = None,
    workspace: str | os.PathLike[str] | None = None,
    user_home: str | os.PathLike[str] | None = None,
    on_missing: OnMissing = "error",
    base_dir: str | os.PathLike[str] | None = None,
    jsonc: bool | None = None,
    overrides: Overrides | None = None,
) -> LoadedConfig:
    """Read a configuration given as a dict or as JSON text.

    ::

        config = trio_mcp.parse_config(
            {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}
        )
        spec = config.servers["time"]

    The dialects, the expansion of ``${...}`` references and the rules for
    bad entries are those of `load_config`, which reads files.

    Args:
        data: The decoded configuration, or its JSON text.
        variables: Variables for ``${NAME}``, looked up before ``environ``.
        environ: The environment for ``${NAME}`` (default: ``os.environ``).
        resolve_input: Answers VS Code's ``${input:ID}``: called as
            ``resolve_input(id, definition)`` (its ``inputs`` entry, or an
            empty mapping), once per id; returns the value, or `None` to
            decline (the servers that need it are then invalid).
        workspace: What ``${workspaceFolder}`` stands for.
        user_home: What ``${userHome}`` stands for (default: your home).
        on_missing: What an unset ``${NAME}`` without a default does:
            ``"error"`` makes its server invalid, ``"keep"`` leaves the
            reference as it is (with a warning naming it), ``"empty"``
            replaces it with nothing.
        base_dir: What relative ``cwd``, ``envFile`` and ``./command`` paths
            are relative to (default: left relative, to the current directory).
        jsonc: Allow comments and trailing commas (`None`: in VS Code
            ``servers`` documents only).
        overrides: Changes made in code, by server name (see `load_config`).

    Raises:
        ConfigError: The configuration as a whole is wrong (not JSON, not an
            object, no server map, a server defined twice, a registry
            ``server.json``); an error in one entry goes to
            `LoadedConfig.invalid` instead.
    """
    expander = _expander(
        environ=environ,
        variables=variables,
        resolve_input=resolve_input,
        workspace=workspace,
        user_home=user_home,
        on_missing=on_missing,
    )
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise file_error(None, "the configuration is not UTF-8 text") from None
    # A dict as it is; another mapping as a dict; anything else is refused below.
    root: Any = data
    if isinstance(data, str):
        root = _decode(data, None, jsonc)
    elif not isinstance(root, dict) and isinstance(root, Mapping):
        root = dict(root)
    document = parse_document(
        root,
        path=None,
        base_dir=None if base_dir is None else os.fspath(base_dir),
        expander=expander,
        read_text=_read_text,
    )
    return _merge([document], overrides, sources=())


def load_config(
    *paths: str | os.PathLike[str],
    variables: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    resolve_input: ResolveInput | None = None,
    workspace: str | os.PathLike[str] | None = None,
    user_home: str | os.PathLike[str] | None = None,
    on_missing: OnMissing = "error",
    jsonc: bool | None = None,
    overrides: Overrides | None = None,
) -> LoadedConfig:
    """Read configuration files, most general first, into one `LoadedConfig`.

    ::

        config = trio_mcp.load_config("~/.cursor/mcp.json", ".cursor/mcp.json")
        for name, error in config.invalid.items():
            print(error)

    Each file may be in any dialect: an ``mcpServers`` map (Claude Desktop,
    Claude Code's ``.mcp.json``, Cursor, Windsurf, Cline), VS Code's
    ``servers`` with ``inputs`` (comments allowed), or a root that is itself
    a map of servers. A server named in a later file replaces the whole
    entry of an earlier one (a warning says which); ``overrides`` then
    change entries in code: a `ServerSpec` replaces the entry (or adds
    one), a mapping of `ServerSpec` field names to values changes those
    fields (``{"db": {"enabled": False}}``).

    Relative ``cwd``, ``envFile`` and ``./command`` paths are relative to
    the file's folder. The keyword arguments are those of `parse_config`.
    See :doc:`config` for every rule.

    Args:
        *paths: The files (``~`` is expanded).

    Raises:
        ConfigError: A file cannot be read or is wrong as a whole; the message
            names the file. A bad entry does not raise: it is in
            `LoadedConfig.invalid`, and the other entries still load.
    """
    expander_args: dict[str, Any] = {
        "environ": environ,
        "variables": variables,
        "resolve_input": resolve_input,
        "workspace": workspace,
        "user_home": user_home,
        "on_missing": on_missing,
    }
    _expander(**expander_args)  # checked even when no file is given, as parse_config checks them
    documents: list[Document] = []
    sources: list[str] = []
    for given in paths:
        path = os.path.expanduser(os.fspath(given))
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise file_error(path, f"cannot read the file: {exc.strerror or type(exc).__name__}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise file_error(path, "not UTF-8 text") from None
        root = _decode(text, path, jsonc)
        documents.append(
            parse_document(
                root,
                path=path,
                base_dir=os.path.dirname(os.path.abspath(path)),
                expander=_expander(**expander_args),
                read_text=_read_text,
            )
        )
        sources.append(path)
    return _merge(documents, overrides, sources=tuple(sources))


def _merge(
    documents: Sequence[Document], overrides: Overrides | None, *, sources: tuple[str, ...]
) -> LoadedConfig:
    servers: dict[str, ServerSpec] = {}
    invalid: dict[str, ConfigError] = {}
    origin: dict[str, str | None] = {}
    warnings: list[str] = []
    for document in documents:
        warnings.extend(document.warnings)
        path = document.source.path
        for name in [*document.servers, *document.invalid]:
            if name in origin:
                warnings.append(f"{path}: server {name!r} replaces the one from {origin[name]}")
            servers.pop(name, None)
            invalid.pop(name, None)
            origin[name] = path
        servers.update(document.servers)
        invalid.update(document.invalid)
    for name, change in (overrides or {}).items():
        if isinstance(change, ServerSpec):
            servers[name] = change if change.name == name else attrs.evolve(change, name=name)
            invalid.pop(name, None)
            continue
        if not isinstance(change, Mapping):
            raise ConfigError(f"overrides[{name!r}] must be a ServerSpec or a mapping of its fields")
        if name in invalid:
            warnings.append(f"overrides: server {name!r} is invalid, so its override was not applied")
            continue
        try:
            servers[name] = _overridden(name, servers.get(name), change)
        except ConfigError as exc:
            servers.pop(name, None)
            invalid[name] = exc
    return LoadedConfig(servers=servers, invalid=invalid, warnings=tuple(warnings), sources=sources)


_FIELDS = frozenset(field.name for field in attrs.fields(ServerSpec)) - {"name"}


def _overridden(name: str, spec: ServerSpec | None, change: Mapping[str, Any]) -> ServerSpec:
    """``spec`` (or a new entry) with the fields ``change`` gives, each checked.

    Raises:
        ConfigError: A field that is not one of `ServerSpec`'s, or a bad
            value; it names the entry's file, the server and the field.
    """
    path = spec.source.path if spec is not None else None
    base = spec if spec is not None else ServerSpec(name=name)

    def error(field: str, message: str) -> ConfigError:
        where = f"{path}: " if path is not None else ""
        return ConfigError(
            f"{where}server {name!r}: {field}: {message} (in overrides)", file=path, server=name, field=field
        )

    for field, value in change.items():
        if field not in _FIELDS:
            raise error(str(field), "not a field of ServerSpec")
        try:
            attrs.evolve(base, **{field: value})
        except (TypeError, ValueError) as exc:
            message = str(exc).removeprefix(f"{field}: ")
            raise error(field, message) from None
    try:
        return attrs.evolve(base, **change)
    except (TypeError, ValueError) as exc:  # fields that only disagree together
        raise error(next(iter(change), "overrides"), str(exc)) from None

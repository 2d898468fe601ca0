"""One configuration document (a decoded JSON value) read into `ServerSpec` entries.

The rules, in the order a reader meets them: the dialect is found from the
root (``mcpServers``, VS Code's ``servers`` with ``inputs``, or a root map
of servers, which is wrapped); each entry is read on its own, so that a bad
entry lands in `LoadedConfig.invalid` and never hides the others; only a
document whose shape is wrong (not an object, no server map, the same server
twice, a registry ``server.json``) fails as a whole.

Nothing here opens a file but an entry's ``envFile``, through the reader the
caller hands in.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any, Final

from .._core.kinds import json_kind
from .expand import Expander, Unresolved
from .spec import ConfigError, ConfigSource, ServerSpec, Transport
from .text import duplicates, parse_dotenv

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["Document", "parse_document"]

#: The values of ``type``/``transport``/``transportType`` and what they mean.
_TRANSPORTS: Final[Mapping[str, str]] = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
    "remote": "http",
    "sse": "sse",
    "ws": "ws",
    "websocket": "ws",
}
_TYPE_KEYS: Final = ("type", "transport", "transportType")
_URL_KEYS: Final = ("url", "serverUrl", "httpUrl")
_STDIO_ONLY: Final = ("args", "env", "envFile", "cwd")
_KNOWN: Final = frozenset(
    {
        *_TYPE_KEYS,
        *_URL_KEYS,
        "command",
        "args",
        "env",
        "envFile",
        "cwd",
        "headers",
        "enabled",
        "disabled",
        "disabledTools",
        "includeTools",
        "excludeTools",
        "startup_timeout",
        "request_timeout",
        "dpop",
    }
)
#: Fields other clients write for themselves: kept in ``extra`` without a warning.
_METADATA: Final = frozenset(
    {"$schema", "description", "title", "icon", "faviconUrl", "autoApprove", "alwaysAllow"}
)
_GOOD_NAME: Final = re.compile(r"[A-Za-z0-9_-]+\Z")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
#: A request timeout in seconds above this is probably milliseconds.
_SUSPICIOUS_SECONDS: Final = 3600


class Document:
    """What one document gave: its entries, the bad ones, and the warnings."""

    def __init__(self, source: ConfigSource) -> None:
        self.source = source
        self.servers: dict[str, ServerSpec] = {}
        self.invalid: dict[str, ConfigError] = {}
        self.warnings: list[str] = []


class _Context:
    def __init__(
        self,
        *,
        path: str | None,
        base_dir: str | None,
        expander: Expander,
        read_text: Callable[[str], str],
        document: Document,
    ) -> None:
        self.path = path
        self.base_dir = base_dir
        self.expander = expander
        self.read_text = read_text
        self.document = document
        self.unknown: dict[str, list[str]] = {}

    def where(self, server: str | None, field: str | None) -> str:
        parts = [self.path] if self.path is not None else []
        if server is not None:
            parts.append(f"server {server!r}")
        if field is not None:
            parts.append(field)
        return ": ".join(parts)

    def error(self, message: str, server: str | None = None, field: str | None = None) -> ConfigError:
        where = self.where(server, field)
        return ConfigError(
            f"{where}: {message}" if where else message, file=self.path, server=server, field=field
        )

    def warn(self, message: str, server: str | None = None, field: str | None = None) -> None:
        where = self.where(server, field)
        self.document.warnings.append(f"{where}: {message}" if where else message)


def file_error(path: str | None, message: str) -> ConfigError:
    """The error for a document that fails as a whole."""
    return ConfigError(f"{path}: {message}" if path is not None else message, file=path)


#: The files that hold a client's other settings too, and servers only once one is added.
_SETTINGS_FILES: Final = frozenset({".claude.json", "claude_desktop_config.json"})


def _is_settings_file(path: str | None) -> bool:
    return path is not None and os.path.basename(path) in _SETTINGS_FILES


def _looks_like_server(value: object) -> bool:
    return isinstance(value, dict) and ("command" in value or any(key in value for key in _URL_KEYS))


def _is_registry_descriptor(root: Mapping[str, Any]) -> bool:
    schema = root.get("$schema")
    if isinstance(schema, str) and (
        "static.modelcontextprotocol.io" in schema or "server.schema.json" in schema
    ):
        return True
    return isinstance(root.get("packages"), list) or isinstance(root.get("remotes"), list)


def parse_document(
    root: Any,
    *,
    path: str | None,
    base_dir: str | None,
    expander: Expander,
    read_text: Callable[[str], str],
) -> Document:
    """Read one decoded document.

    Args:
        root: The decoded JSON value.
        path: The file it came from, for messages (`None` for a dict or text).
        base_dir: What relative ``cwd``, ``envFile`` and ``./command`` paths
            are relative to (`None`: left relative).
        expander: Expands the references in values.
        read_text: Reads an ``envFile``.

    Raises:
        ConfigError: The document as a whole is wrong.
    """
    if not isinstance(root, dict):
        raise file_error(path, f"the configuration must be a JSON object, got {json_kind(root)}")
    if duplicates(root):
        raise file_error(path, f"the key {duplicates(root)[0]!r} is given twice")
    if _is_registry_descriptor(root):
        raise file_error(
            path,
            "this is a registry server.json (a package description), not a client configuration; "
            'write an entry {"mcpServers": {"NAME": {"command": ..., "args": [...]}}} for the package',
        )
    if "mcpServers" in root and "servers" in root:
        raise file_error(path, "both 'mcpServers' and 'servers' are present; keep one")
    warnings: list[str] = []
    if "mcpServers" in root:
        dialect, key, servers = "mcpServers", "mcpServers", root["mcpServers"]
        if isinstance(servers, list):
            raise file_error(
                path, "'mcpServers' is a list (Continue's YAML form); this reader takes a map of NAME: {...}"
            )
    elif "servers" in root:
        dialect, key, servers = "vscode", "servers", root["servers"]
    elif root and all(_looks_like_server(value) for value in root.values()):
        dialect, key, servers = "mcpServers", None, root
        warnings.append(
            (f"{path}: " if path else "")
            + "no 'mcpServers' key: the root is read as the map of servers, as if wrapped in one"
        )
    elif not root or _is_settings_file(path):
        # A client's settings file holds its servers only once one was
        # added (Claude Code's ~/.claude.json, Claude Desktop's config), and
        # an empty object is an empty list: no servers, and nothing wrong.
        return Document(ConfigSource(path=path, dialect="mcpServers"))
    elif "context_servers" in root:
        raise file_error(path, "Zed's 'context_servers' settings are not read; use an 'mcpServers' map")
    else:
        raise file_error(path, "no 'mcpServers' (or VS Code 'servers') map of servers")
    if not isinstance(servers, dict):
        raise file_error(
            path, f"{key!r} must be an object mapping names to servers, got {json_kind(servers)}"
        )
    if duplicates(servers):
        raise file_error(path, f"the server {duplicates(servers)[0]!r} is defined twice")

    document = Document(ConfigSource(path=path, dialect=dialect))
    document.warnings.extend(warnings)
    if dialect == "vscode":
        expander.inputs = _inputs(root.get("inputs"), path, document)
    context = _Context(
        path=path, base_dir=base_dir, expander=expander, read_text=read_text, document=document
    )
    for name, raw in servers.items():
        try:
            document.servers[name] = _entry(name, raw, context)
        except ConfigError as exc:
            document.invalid[name] = exc
    for field, names in context.unknown.items():
        which = ", ".join(repr(name) for name in names)
        context.warn(f"unknown field {field!r} (server {which}) is kept in extra and not used")
    if expander.kept:
        context.warn("left unexpanded (not set): " + ", ".join(expander.kept))
    return document


def _inputs(raw: object, path: str | None, document: Document) -> dict[str, Mapping[str, Any]]:
    if raw is None:
        return {}
    prefix = f"{path}: " if path else ""
    if not isinstance(raw, list):
        document.warnings.append(prefix + f"'inputs' must be a list, got {json_kind(raw)}; it is ignored")
        return {}
    inputs: dict[str, Mapping[str, Any]] = {}
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            document.warnings.append(prefix + f"inputs[{index}] has no string 'id'; it is ignored")
            continue
        inputs[item["id"]] = dict(item)
    return inputs


# ----------------------------------------------------------------- one entry


def _entry(name: str, raw: object, ctx: _Context) -> ServerSpec:
    if not name:
        raise ctx.error("a server name must not be empty", server=name)
    if _CONTROL.search(name):
        raise ctx.error("a server name must not contain control characters", server=name)
    if not isinstance(raw, dict):
        raise ctx.error(f"a server must be an object, got {json_kind(raw)}", server=name)
    if duplicates(raw):
        field = duplicates(raw)[0]
        raise ctx.error("this field is given twice", server=name, field=field)
    if not _GOOD_NAME.match(name):
        ctx.warn(
            "the name has characters outside A-Z a-z 0-9 _ - (tool names built from it are sanitized)",
            server=name,
        )

    def fail(field: str, message: str) -> ConfigError:
        return ctx.error(message, server=name, field=field)

    # -- the transport
    explicit: str | None = None
    explicit_key = ""
    for key in _TYPE_KEYS:
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, str):
            raise fail(key, f"must be a string, got {json_kind(value)}")
        mapped = _TRANSPORTS.get(value)
        if mapped is None:
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise fail(key, f"unknown transport {shown!r} (stdio, http, streamable-http or sse)")
        if explicit is not None and mapped != explicit:
            raise fail(key, f"says {mapped!r} but {explicit_key!r} says {explicit!r}")
        explicit, explicit_key = mapped, key
    if explicit == "ws" or "ws_url" in raw:
        raise fail(explicit_key or "ws_url", "WebSocket servers are not supported")

    urls = [(key, raw[key]) for key in _URL_KEYS if key in raw]
    for key, value in urls:
        if not isinstance(value, str):
            raise fail(key, f"must be a string, got {json_kind(value)}")
    if len({value for _, value in urls}) > 1:
        raise fail(urls[1][0], f"disagrees with {urls[0][0]!r}; give one URL")
    has_command = "command" in raw
    has_url = bool(urls)
    transport: Transport
    if explicit is not None:
        transport = "stdio" if explicit == "stdio" else "http" if explicit == "http" else "sse"
        if transport == "stdio" and has_url:
            ctx.warn(f"ignored: the type is {explicit!r}", server=name, field=urls[0][0])
            has_url = False
        elif transport != "stdio" and has_command:
            ctx.warn(f"ignored: the type is {explicit!r}", server=name, field="command")
            has_command = False
    elif has_command and has_url:
        raise fail("command", f"both 'command' and {urls[0][0]!r} are given; set 'type' to choose one")
    elif has_command:
        transport = "stdio"
    elif has_url:
        transport = "http"
    else:
        raise fail("command", "no 'command' (a local server) and no 'url' (a remote one)")
    if transport == "stdio" and not has_command:
        raise fail("command", f"no 'command', which a {explicit_key} 'stdio' server needs")
    if transport != "stdio" and not has_url:
        raise fail("url", f"no 'url', which a {explicit_key} {transport!r} server needs")

    # -- enabled
    enabled = True
    for key in ("enabled", "disabled"):
        if key in raw and not isinstance(raw[key], bool):
            raise fail(key, f"must be true or false, got {json_kind(raw[key])}")
    if "enabled" in raw and "disabled" in raw and raw["enabled"] == raw["disabled"]:
        raise fail("disabled", "contradicts 'enabled'; give one of them")
    if "enabled" in raw:
        enabled = raw["enabled"]
    elif "disabled" in raw:
        enabled = not raw["disabled"]

    def expand(field: str, text: str) -> str:
        try:
            value = ctx.expander.expand(text)
        except Unresolved as exc:
            raise fail(field, str(exc)) from None
        if "\0" in value:
            raise fail(field, "contains a NUL character")
        return value

    def string(field: str) -> str | None:
        value = raw.get(field)
        if field not in raw:
            return None
        if not isinstance(value, str):
            raise fail(field, f"must be a string, got {json_kind(value)}")
        return value

    kwargs: dict[str, Any] = {}
    # -- stdio fields
    if transport == "stdio":
        command = string("command") or ""
        if not command.strip():
            raise fail("command", "is empty")
        written = (command, *_written_args(raw))
        command = _home(expand("command", command), ctx)
        if not os.path.isabs(command) and ("/" in command or (os.sep != "/" and os.sep in command)):
            command = _resolve(ctx.base_dir, command)
        elif "args" not in raw and len(command.split()) > 1 and not os.path.exists(command):
            words = written[0].split()
            ctx.warn(
                "a whole command line, which is never split (there is no shell): write"
                f' "command": {json.dumps(words[0])}, "args": {json.dumps(words[1:])}',
                server=name,
                field="command",
            )
        kwargs["command"] = command
        kwargs["args"] = _args(raw, fail, expand, ctx, name)
        kwargs["written"] = written
        env = _string_map(raw, "env", fail, expand, ctx, name)
        env_file = string("envFile")
        if env_file is not None:
            env = {**_read_env_file(expand("envFile", env_file), fail, ctx), **env}
        kwargs["env"] = env
        cwd = string("cwd")
        if cwd is not None:
            cwd = expand("cwd", cwd)
            if not cwd:
                raise fail("cwd", "is empty")
            kwargs["cwd"] = _resolve(ctx.base_dir, _home(cwd, ctx))
    else:
        url = expand(urls[0][0], urls[0][1])
        _check_url(url, urls[0][0], fail)
        kwargs["url"] = url
        for key in _STDIO_ONLY:
            if key in raw:
                ctx.warn("ignored: the server is remote", server=name, field=key)
    headers = _string_map(raw, "headers", fail, expand, ctx, name)
    for header, value in headers.items():
        if not _HEADER_NAME.match(header):
            raise fail(f"headers.{header}", "not a valid HTTP header name")
        if "\r" in value or "\n" in value:
            raise fail(f"headers.{header}", "the value contains a line break")
    if headers and transport == "stdio":
        ctx.warn("ignored: the server is local (stdio)", server=name, field="headers")
        headers = {}
    kwargs["headers"] = headers

    # -- tool filters, timeouts
    deny: set[str] = set()
    for key in ("disabledTools", "excludeTools"):
        if key in raw:
            deny |= _string_list(raw[key], key, fail)
    if "includeTools" in raw:
        kwargs["tools_allow"] = frozenset(_string_list(raw["includeTools"], "includeTools", fail))
    kwargs["tools_deny"] = frozenset(deny)
    # Our own fields, in seconds.
    for key in ("startup_timeout", "request_timeout"):
        if key in raw:
            kwargs[key] = _seconds(raw[key], key, fail)
    if "dpop" in raw:
        if not isinstance(raw["dpop"], bool) and raw["dpop"] is not None:
            raise fail("dpop", "must be true, false or null (as the server asks)")
        if transport == "stdio":
            ctx.warn("ignored: the server is local (stdio)", server=name, field="dpop")
        else:
            kwargs["dpop"] = raw["dpop"]

    extra: dict[str, Any] = {}
    cline = "transportType" in raw
    for key, value in raw.items():
        if key in _KNOWN:
            continue
        if key == "timeout" and cline and "request_timeout" not in raw:
            kwargs["request_timeout"] = _seconds(value, "timeout", fail)
            if kwargs["request_timeout"] > _SUSPICIOUS_SECONDS:
                ctx.warn(
                    f"over {_SUSPICIOUS_SECONDS} seconds; Cline's timeout is in seconds, not milliseconds",
                    server=name,
                    field="timeout",
                )
            continue
        extra[key] = value
        if key == "timeout":
            ctx.warn(
                "not used: clients disagree on its unit (seconds or milliseconds); "
                "set request_timeout in code (overrides=...) instead",
                server=name,
                field="timeout",
            )
        elif key not in _METADATA:
            ctx.unknown.setdefault(key, []).append(name)
    return ServerSpec(
        name=name,
        transport=transport,
        enabled=enabled,
        source=ctx.document.source,
        extra=extra,
        **kwargs,
    )


def _home(path: str, ctx: _Context) -> str:
    """``path`` with a leading ``~`` or ``~user`` expanded, as a shell would (``~`` is ``user_home``)."""
    if not path.startswith("~"):
        return path
    home = ctx.expander.user_home
    head, sep, rest = path.partition("/")
    if head == "~" and home is not None:
        return home + (sep + rest if sep else "")
    return os.path.expanduser(path)


def _resolve(base_dir: str | None, path: str) -> str:
    if base_dir is None or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(base_dir, path))


def _written_args(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """The arguments as written (before `_args` checks them: only strings count)."""
    value = raw.get("args", [])
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def _args(
    raw: Mapping[str, Any],
    fail: Callable[[str, str], ConfigError],
    expand: Callable[[str, str], str],
    ctx: _Context,
    name: str,
) -> tuple[str, ...]:
    value = raw.get("args", [])
    if isinstance(value, str):
        raise fail(
            "args",
            'must be a list of strings, got one string (no shell splitting: write ["-y", "pkg"], not "-y pkg")',
        )
    if not isinstance(value, list):
        raise fail("args", f"must be a list of strings, got {json_kind(value)}")
    result: list[str] = []
    for index, item in enumerate(value):
        field = f"args[{index}]"
        if not isinstance(item, str):
            raise fail(field, f"must be a string, got {json_kind(item)}")
        result.append(expand(field, item))
    return tuple(result)


def _string_map(
    raw: Mapping[str, Any],
    field: str,
    fail: Callable[[str, str], ConfigError],
    expand: Callable[[str, str], str],
    ctx: _Context,
    name: str,
) -> dict[str, str]:
    if field not in raw:
        return {}
    value = raw[field]
    if not isinstance(value, dict):
        raise fail(field, f"must be an object of names to strings, got {json_kind(value)}")
    if duplicates(value):
        raise fail(f"{field}.{duplicates(value)[0]}", "given twice")
    result: dict[str, str] = {}
    converted: list[str] = []
    for key, item in value.items():
        if not key:
            raise fail(field, "a name is empty")
        if "=" in key or "\0" in key:
            shown = key.split("=", 1)[0].replace("\0", "\\0")
            raise fail(f"{field}.{shown}", "a name must not contain '=' or NUL")
        where = f"{field}.{key}"
        if isinstance(item, bool):
            item = "true" if item else "false"
            converted.append(key)
        elif isinstance(item, int | float):
            item = str(item)
            converted.append(key)
        elif not isinstance(item, str):
            raise fail(where, f"must be a string, got {json_kind(item)}")
        result[key] = expand(where, item)
    if converted:
        ctx.warn(
            "converted to text: " + ", ".join(converted) + " (write them as strings)",
            server=name,
            field=field,
        )
    return result


def _read_env_file(path: str, fail: Callable[[str, str], ConfigError], ctx: _Context) -> dict[str, str]:
    path = _resolve(ctx.base_dir, _home(path, ctx))
    try:
        text = ctx.read_text(path)
    except OSError as exc:
        raise fail("envFile", f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise fail("envFile", f"{path} is not UTF-8 text") from None
    try:
        return parse_dotenv(text)
    except ValueError as exc:
        raise fail("envFile", f"{path}: {exc}") from None


def _check_url(url: str, field: str, fail: Callable[[str, str], ConfigError]) -> None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        raise fail(field, "not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise fail(field, "must be an http:// or https:// URL")
    if _CONTROL.search(url) or " " in url:
        raise fail(field, "must not contain spaces or control characters")


def _string_list(value: object, field: str, fail: Callable[[str, str], ConfigError]) -> set[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail(field, f"must be a list of tool names, got {json_kind(value)}")
    return set(value)


def _seconds(value: object, field: str, fail: Callable[[str, str], ConfigError]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(field, f"must be a number of seconds, got {json_kind(value)}")
    seconds = float(value)
    if not seconds > 0 or seconds == float("inf"):
        raise fail(field, "must be a positive number of seconds")
    return seconds

"""Configuration files: the dialects, expansion, the refuse/tolerate rules, discovery.

Each rule has a test, and each error one that checks the message names the
file, the server and the field. The secrets test puts a known value in
``env``, ``headers``, an ``envFile`` and a URL, and looks for it in every
message, warning and ``repr``. The properties (marker ``property``) feed
any JSON value, and any text, to `parse_config`: the answer is a
`LoadedConfig` or a `ConfigError`, never another exception.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings, strategies as st

import trio_mcp
from trio_mcp import ConfigError, LoadedConfig, ServerSpec, discover_configs, load_config, parse_config
from trio_mcp._config.text import parse_dotenv, strip_jsonc

SECRET = "s3cr3t-Tok3n-value"


def parse(data, **kwargs) -> LoadedConfig:
    kwargs.setdefault("environ", {})
    return parse_config(data, **kwargs)


def one(entry: dict, **kwargs) -> ServerSpec:
    """The spec of a one-server config; fails if the entry is invalid."""
    config = parse({"mcpServers": {"s": entry}}, **kwargs)
    assert not config.invalid, config.invalid
    return config.servers["s"]


def bad(entry: dict, **kwargs) -> ConfigError:
    """The error of a one-server config whose entry is invalid, beside a good one that still loads."""
    config = parse({"mcpServers": {"s": entry, "good": {"command": "ok"}}}, **kwargs)
    assert "s" not in config.servers
    assert list(config.servers) == ["good"]
    error = config.invalid["s"]
    assert error.server == "s"
    assert "server 's'" in str(error)
    return error


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


# ------------------------------------------------------------------ dialects


def test_claude_desktop_file():
    spec = one({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]})
    assert spec.transport == "stdio"
    assert spec.command == "npx"
    assert spec.args == ("-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    assert spec.enabled
    assert spec.source.dialect == "mcpServers"


def test_claude_code_file_with_http_and_stdio(tmp_path):
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "api": {
                    "type": "http",
                    "url": "${API_BASE_URL:-https://api.example.com}/mcp",
                    "headers": {"Authorization": "Bearer ${API_KEY}"},
                },
                "sqlite": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "mcp-sqlite", "${DB_PATH}"],
                    "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"},
                },
            }
        },
    )
    config = load_config(path, environ={"API_KEY": "k", "DB_PATH": "/db"})
    assert config.sources == (str(path),)
    api, sqlite = config.servers["api"], config.servers["sqlite"]
    assert api.transport == "http"
    assert api.url == "https://api.example.com/mcp"
    assert dict(api.headers) == {"Authorization": "Bearer k"}
    assert sqlite.args == ("-y", "mcp-sqlite", "/db")
    assert dict(sqlite.env) == {"LOG_LEVEL": "info"}
    assert api.source.path == str(path)


def test_vscode_file_with_inputs_and_comments(tmp_path):
    text = """{
      // VS Code allows comments
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "ask",],
                       "env": {"KEY": "${input:key}"}},  /* trailing comma next */
        "context7": {"type": "http", "url": "https://mcp.context7.com/mcp"},
      }
    }"""
    path = write(tmp_path / ".vscode" / "mcp.json", text)
    asked = []

    def resolve(input_id, definition):
        asked.append((input_id, definition.get("description")))
        return "the-key"

    config = load_config(path, resolve_input=resolve, environ={})
    assert config.servers["perplexity"].env["KEY"] == "the-key"
    assert config.servers["perplexity"].source.dialect == "vscode"
    assert config.servers["context7"].transport == "http"
    assert asked == [("key", "API key")]


def test_an_input_is_asked_once_for_all_its_uses():
    calls = []

    def resolve(input_id, definition):
        calls.append(input_id)
        return "v"

    config = parse(
        {
            "servers": {
                "a": {"command": "x", "args": ["${input:k}"]},
                "b": {"command": "y", "env": {"K": "${input:k}"}},
            }
        },
        resolve_input=resolve,
    )
    assert config.servers["a"].args == ("v",)
    assert config.servers["b"].env["K"] == "v"
    assert calls == ["k"]


def test_an_input_without_a_resolver_or_declined_makes_its_server_invalid():
    data = {"servers": {"s": {"command": "x", "env": {"K": "${input:k}"}}, "good": {"command": "y"}}}
    error = parse(data).invalid["s"]
    assert error.field == "env.K"
    assert "input:k" in str(error)
    config = parse(data, resolve_input=lambda input_id, definition: None)
    assert "s" in config.invalid
    assert "good" in config.servers


def test_comments_are_refused_outside_vscode_files(tmp_path):
    path = write(tmp_path / "mcp.json", '{"mcpServers": {"a": {"command": "x"}} // no\n}')
    with pytest.raises(ConfigError, match="VS Code files only") as info:
        load_config(path)
    assert info.value.file == str(path)
    assert "a" in load_config(path, jsonc=True).servers


def test_any_mapping_is_accepted():
    from types import MappingProxyType

    assert "a" in parse(MappingProxyType({"mcpServers": {"a": {"command": "x"}}})).servers


def test_text_and_bytes_are_accepted():
    text = '{"mcpServers": {"a": {"command": "x"}}}'
    assert parse(text).servers["a"].command == "x"
    assert parse(text.encode()).servers["a"].command == "x"


def test_a_root_map_of_servers_is_wrapped_with_a_warning():
    config = parse({"a": {"command": "x"}, "b": {"url": "https://example.com/mcp"}})
    assert set(config.servers) == {"a", "b"}
    assert any("no 'mcpServers' key" in warning for warning in config.warnings)


def test_windsurf_server_url():
    spec = one({"serverUrl": "https://api.example.com/mcp", "disabled": True})
    assert spec.transport == "http"
    assert spec.url == "https://api.example.com/mcp"
    assert not spec.enabled


def test_cline_timeout_is_in_seconds():
    spec = one({"url": "https://x.example/sse", "transportType": "sse", "timeout": 30})
    assert spec.transport == "sse"
    assert spec.request_timeout == 30


def test_a_cline_timeout_over_an_hour_is_suspicious():
    config = parse({"mcpServers": {"s": {"command": "x", "transportType": "stdio", "timeout": 60000}}})
    assert config.servers["s"].request_timeout == 60000
    assert any("not milliseconds" in warning for warning in config.warnings)


def test_malformed_inputs_are_ignored_with_a_warning():
    config = parse({"inputs": {"id": "x"}, "servers": {"a": {"command": "x"}}})
    assert "a" in config.servers
    assert any("'inputs' must be a list" in warning for warning in config.warnings)
    config = parse({"inputs": [{"id": 3}, "x", {"id": "k", "description": "d"}], "servers": {}})
    assert sum("has no string 'id'" in warning for warning in config.warnings) == 2


def test_a_timeout_of_unknown_unit_is_kept_but_not_used():
    config = parse({"mcpServers": {"s": {"command": "x", "timeout": 30000}}})
    assert config.servers["s"].request_timeout is None
    assert config.servers["s"].extra["timeout"] == 30000
    assert any("timeout" in warning and "unit" in warning for warning in config.warnings)


def test_tool_filters():
    spec = one({"command": "x", "disabledTools": ["a"], "excludeTools": ["b"], "includeTools": ["a", "c"]})
    assert spec.tools_deny == {"a", "b"}
    assert spec.tools_allow == {"a", "c"}
    assert spec.allows_tool("c")
    assert not spec.allows_tool("a")


# ------------------------------------------------------------------ whole-file errors


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("[]", "must be a JSON object, got an array"),
        ('"x"', "must be a JSON object, got a string"),
        ("{", "not valid JSON"),
        ('{"mcpServers": {"a": {"command": NaN}}}', "not valid JSON"),
        ('{"mcpServers": []}', "Continue's YAML form"),
        ('{"mcpServers": 3}', "must be an object mapping names to servers, got an integer"),
        ('{"servers": "x"}', "got a string"),
        ('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}', "'a' is defined twice"),
        ('{"mcpServers": {}, "mcpServers": {}}', "given twice"),
        ('{"mcpServers": {}, "servers": {}}', "keep one"),
        ('{"other": 1}', "no 'mcpServers'"),
        ('{"context_servers": {}}', "Zed"),
        (
            (
                '{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",'
                ' "name": "io.github.x/y", "packages": []}'
            ),
            "registry server.json",
        ),
        ('{"name": "x", "remotes": [{"type": "sse", "url": "https://x"}]}', "registry server.json"),
        ("[" * 100000, "not valid JSON"),
    ],
)
def test_whole_file_errors(tmp_path, data, words):
    with pytest.raises(ConfigError) as info:
        parse(data)
    assert words in str(info.value)
    assert info.value.server is None
    path = write(tmp_path / "c.json", data)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert info.value.file == str(path)


def test_unreadable_and_non_utf8_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the file") as info:
        load_config(tmp_path / "missing.json")
    assert info.value.file == str(tmp_path / "missing.json")
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"mcpServers": {"\xe9": {"command": "x"}}}')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


def test_a_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"a": {"command": "x"}}}')
    assert "a" in load_config(path).servers


# ------------------------------------------------------------------ entry errors


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ("npx server", None, "must be an object, got a string"),
        ({}, "command", "no 'command'"),
        ({"type": "stdio"}, "command", "no 'command', which a type 'stdio' server needs"),
        ({"type": "stdio", "url": "https://a"}, "command", "no 'command'"),
        ({"transport": "sse"}, "url", "no 'url', which a transport 'sse' server needs"),
        ({"type": "http", "command": "x"}, "url", "no 'url'"),
        ({"command": "x", "url": "https://a"}, "command", "set 'type'"),
        ({"type": "pigeon", "command": "x"}, "type", "unknown transport 'pigeon'"),
        ({"type": 3, "command": "x"}, "type", "must be a string"),
        ({"type": "stdio", "transport": "sse", "command": "x"}, "transport", "says 'sse'"),
        ({"type": "websocket", "url": "wss://a"}, "type", "WebSocket"),
        ({"ws_url": "wss://a"}, "ws_url", "WebSocket"),
        ({"command": "x", "args": "-y pkg"}, "args", "no shell splitting"),
        ({"command": "x", "args": {"a": 1}}, "args", "got an object"),
        ({"command": "x", "args": ["a", 3]}, "args[1]", "got an integer"),
        ({"command": 3}, "command", "must be a string"),
        ({"command": "  "}, "command", "is empty"),
        ({"command": "x", "env": ["A=1"]}, "env", "got an array"),
        ({"command": "x", "env": {"A": None}}, "env.A", "got null"),
        ({"command": "x", "env": {"A": [1]}}, "env.A", "got an array"),
        ({"command": "x", "env": {"A": {}}}, "env.A", "got an object"),
        ({"command": "x", "env": {"": "1"}}, "env", "a name is empty"),
        ({"command": "x", "env": {"A=B": "1"}}, "env.A", "'='"),
        ({"command": "x", "env": {"A": "a\0b"}}, "env.A", "NUL"),
        ({"command": "x", "enabled": True, "disabled": True}, "disabled", "contradicts"),
        ({"command": "x", "disabled": "yes"}, "disabled", "true or false"),
        ({"command": "x", "cwd": 3}, "cwd", "must be a string"),
        ({"command": "x", "envFile": "/nonexistent/.env"}, "envFile", "cannot read"),
        ({"command": "x", "args": ["${UNSET_VAR}"]}, "args[0]", "UNSET_VAR is not set"),
        ({"command": "${UNSET_VAR}"}, "command", "UNSET_VAR"),
        ({"command": "x", "cwd": "${workspaceFolder}"}, "cwd", "no workspace folder"),
        ({"url": "ftp://example.com"}, "url", "http:// or https://"),
        ({"url": "https://a", "serverUrl": "https://b"}, "serverUrl", "disagrees"),
        ({"url": 3}, "url", "must be a string"),
        ({"url": "https://a", "headers": {"Bad Name": "v"}}, "headers.Bad Name", "header name"),
        ({"url": "https://a", "headers": {"X": "a\r\nInjected: 1"}}, "headers.X", "line break"),
        ({"url": "https://a", "headers": "x"}, "headers", "got a string"),
        ({"url": "https://x", "transportType": "sse", "timeout": -1}, "timeout", "positive"),
        ({"url": "https://x", "transportType": "sse", "timeout": "30"}, "timeout", "got a string"),
        ({"command": "x", "disabledTools": "a"}, "disabledTools", "list of tool names"),
    ],
)
def test_entry_errors(entry, field, words):
    error = bad(entry)
    assert error.field == field
    assert words in str(error)
    if field is not None:
        assert f"server 's': {field}: " in str(error)


def test_a_field_given_twice_in_an_entry():
    config = parse('{"mcpServers": {"s": {"command": "x", "command": "y"}, "good": {"command": "z"}}}')
    assert config.invalid["s"].field == "command"
    assert "given twice" in str(config.invalid["s"])
    assert "good" in config.servers


def test_empty_and_control_character_names():
    config = parse({"mcpServers": {"": {"command": "x"}, "a\nb": {"command": "x"}, "ok": {"command": "x"}}})
    assert set(config.invalid) == {"", "a\nb"}
    assert list(config.servers) == ["ok"]


def test_an_error_names_the_file(tmp_path):
    path = write(tmp_path / "c.json", {"mcpServers": {"s": {"command": "x", "args": "a b"}}})
    error = load_config(path).invalid["s"]
    assert error.file == str(path)
    assert str(error).startswith(f"{path}: server 's': args: ")


# ------------------------------------------------------------------ tolerated, with warnings


def test_numbers_and_booleans_in_env_become_text_with_a_warning():
    config = parse({"mcpServers": {"s": {"command": "x", "env": {"PORT": 8080, "ON": True, "R": 1.5}}}})
    assert dict(config.servers["s"].env) == {"PORT": "8080", "ON": "true", "R": "1.5"}
    assert any("PORT" in warning and "converted" in warning for warning in config.warnings)


def test_unknown_fields_are_kept_with_one_warning_per_field():
    config = parse(
        {
            "mcpServers": {
                "a": {"command": "x", "autoStart": True, "description": "d"},
                "b": {"command": "y", "autoStart": False},
            }
        }
    )
    assert config.servers["a"].extra == {"autoStart": True, "description": "d"}
    unknown = [warning for warning in config.warnings if "autoStart" in warning]
    assert len(unknown) == 1
    assert "'a', 'b'" in unknown[0]
    assert not any("description" in warning for warning in config.warnings)


def test_odd_names_load_with_a_warning():
    config = parse({"mcpServers": {"io.github.upstash/context7": {"command": "x"}}})
    assert "io.github.upstash/context7" in config.servers
    assert any("characters outside" in warning for warning in config.warnings)


def test_disabled_entries_load_disabled():
    config = parse(
        {"mcpServers": {"a": {"command": "x", "disabled": True}, "b": {"command": "x", "enabled": False}}}
    )
    assert not config.servers["a"].enabled
    assert not config.servers["b"].enabled
    assert not config.invalid


def test_explicit_type_wins_over_a_stray_field_with_a_warning():
    config = parse({"mcpServers": {"s": {"type": "stdio", "command": "x", "url": "https://a"}}})
    assert config.servers["s"].url is None
    assert any("url: ignored" in warning for warning in config.warnings)
    config = parse({"mcpServers": {"s": {"type": "sse", "command": "x", "url": "https://a"}}})
    assert config.servers["s"].command is None
    assert config.servers["s"].transport == "sse"


def test_url_entries_are_parsed():
    spec = one({"url": "https://example.com/mcp", "headers": {"X-Key": "${K}"}}, environ={"K": "v"})
    assert (spec.transport, spec.url, dict(spec.headers)) == (
        "http",
        "https://example.com/mcp",
        {"X-Key": "v"},
    )
    assert one({"type": "streamable-http", "url": "http://h/mcp"}).transport == "http"
    assert one({"type": "sse", "url": "http://h/sse"}).transport == "sse"


def test_empty_args_and_env():
    spec = one({"command": "x", "args": [], "env": {}})
    assert spec.args == ()
    assert dict(spec.env) == {}


# ------------------------------------------------------------------ expansion (CONFIG §2.4)


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("${A}", {"A": "1"}, "1"),
        ("${env:A}", {"A": "1"}, "1"),
        ("x${A}y${B}z", {"A": "1", "B": "2"}, "x1y2z"),
        ("${A:-d}", {}, "d"),
        ("${A:-d}", {"A": ""}, "d"),  # POSIX: empty takes the default too
        ("${A}", {"A": ""}, ""),
        ("${A:-}", {}, ""),
        ("${A:-${B}}", {"B": "2"}, "${B}"),  # one pass: a default is literal
        ("${A}", {"A": "${B}"}, "${B}"),  # a value is never expanded again
        ("$A", {"A": "1"}, "$A"),  # bare references stay
        ("%A%", {"A": "1"}, "%A%"),
        ("${not a name}", {}, "${not a name}"),
        ("${config:x}", {}, "${config:x}"),
        ("${", {}, "${"),
        ("${pathSeparator}", {}, os.sep),
    ],
)
def test_expansion(text, environ, expected):
    assert one({"command": "x", "args": [text]}, environ=environ).args == (expected,)


def test_caller_variables_come_before_the_environment():
    spec = one({"command": "x", "args": ["${A}"]}, environ={"A": "env"}, variables={"A": "caller"})
    assert spec.args == ("caller",)


def test_os_environ_is_the_default(monkeypatch):
    monkeypatch.setenv("TRIO_MCP_TEST_VAR", "from-os")
    config = parse_config({"mcpServers": {"s": {"command": "x", "args": ["${TRIO_MCP_TEST_VAR}"]}}})
    assert config.servers["s"].args == ("from-os",)


def test_user_home_and_workspace(tmp_path):
    spec = one(
        {"command": "${userHome}/bin/x", "cwd": "${workspaceFolder}", "args": ["${workspaceFolderBasename}"]},
        user_home="/home/u",
        workspace=tmp_path,
    )
    assert spec.command == "/home/u/bin/x"
    assert spec.cwd == str(tmp_path)
    assert spec.args == (tmp_path.name,)


def test_expansion_applies_to_values_only():
    config = parse(
        {"mcpServers": {"${A}": {"command": "x", "env": {"${A}": "${A}"}, "other": "${A}"}}},
        environ={"A": "1"},
    )
    spec = config.servers["${A}"]
    assert dict(spec.env) == {"${A}": "1"}
    assert spec.extra["other"] == "${A}"


def test_on_missing_keep_and_empty():
    keep = parse({"mcpServers": {"s": {"command": "x", "args": ["${NOPE}"]}}}, on_missing="keep")
    assert keep.servers["s"].args == ("${NOPE}",)
    assert any("NOPE" in warning for warning in keep.warnings)
    empty = parse({"mcpServers": {"s": {"command": "x", "args": ["a${NOPE}b"]}}}, on_missing="empty")
    assert empty.servers["s"].args == ("ab",)
    with pytest.raises(ValueError, match="on_missing"):
        parse({"mcpServers": {}}, on_missing="maybe")
    with pytest.raises(ValueError, match="on_missing"):
        load_config(on_missing="maybe")  # no file to read: still checked


def test_case_insensitive_names_on_windows():
    from trio_mcp._config.expand import Expander

    expander = Expander(environ={"Path": "p"}, fold_case=True)
    assert expander.expand("${PATH}") == "p"
    assert Expander(environ={"Path": "p"}, fold_case=False, on_missing="keep").expand("${PATH}") == "${PATH}"


# ------------------------------------------------------------------ envFile, paths, precedence


def test_env_file_is_relative_to_the_config_and_env_wins(tmp_path):
    write(
        tmp_path / "sub" / ".env",
        "# comment\nA=from-file\nexport B='single ${X}'\nC=\"dq\\n\" # c\nD=plain # comment\n",
    )
    path = write(
        tmp_path / "sub" / "mcp.json",
        {"mcpServers": {"s": {"command": "x", "envFile": ".env", "env": {"A": "explicit"}}}},
    )
    spec = load_config(path, environ={}).servers["s"]
    assert dict(spec.env) == {"A": "explicit", "B": "single ${X}", "C": "dq\n", "D": "plain"}


def test_env_file_values_do_not_feed_expansion(tmp_path):
    write(tmp_path / ".env", "TOKEN=abc\n")
    path = write(
        tmp_path / "c.json", {"mcpServers": {"s": {"command": "x", "envFile": ".env", "args": ["${TOKEN}"]}}}
    )
    config = load_config(path, environ={})
    assert "TOKEN is not set" in str(config.invalid["s"])


def test_a_malformed_env_file_names_the_line_only(tmp_path):
    write(tmp_path / ".env", f"A=1\nthis line {SECRET}\n")
    path = write(tmp_path / "c.json", {"mcpServers": {"s": {"command": "x", "envFile": ".env"}}})
    error = load_config(path, environ={}).invalid["s"]
    assert error.field == "envFile"
    assert "line 2" in str(error)
    assert SECRET not in str(error)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("A=1\nA=2", {"A": "2"}),
        ("A = spaced  ", {"A": "spaced"}),
        ("A=a#b", {"A": "a#b"}),
        ("A='a # b'", {"A": "a # b"}),
        ('A="a\\"b"', {"A": 'a"b'}),
        ("A=", {"A": ""}),
        ("export\tA=1", {"A": "1"}),
    ],
)
def test_dotenv(text, expected):
    assert parse_dotenv(text) == expected


@pytest.mark.parametrize("text", ["A", "1A=1", "A='x", 'A="x', "A='x' y"])
def test_dotenv_errors(text):
    with pytest.raises(ValueError, match="line 1"):
        parse_dotenv(text)


def test_relative_cwd_and_command_resolve_against_the_file(tmp_path):
    path = write(
        tmp_path / "c.json",
        {"mcpServers": {"s": {"command": "./server", "cwd": "work"}, "t": {"command": "npx"}}},
    )
    config = load_config(path)
    assert config.servers["s"].command == str(tmp_path / "server")
    assert config.servers["s"].cwd == str(tmp_path / "work")
    assert config.servers["t"].command == "npx"  # looked up on PATH later


def test_a_later_file_replaces_a_whole_entry_with_a_warning(tmp_path):
    user = write(
        tmp_path / "user.json",
        {"mcpServers": {"a": {"command": "u", "env": {"K": "1"}}, "b": {"command": "b"}}},
    )
    project = write(tmp_path / "project.json", {"mcpServers": {"a": {"command": "p"}}})
    config = load_config(user, project)
    assert config.servers["a"].command == "p"
    assert dict(config.servers["a"].env) == {}  # no deep merge
    assert config.servers["a"].source.path == str(project)
    assert list(config.servers) == ["b", "a"]
    assert config.sources == (str(user), str(project))
    assert any("'a' replaces the one from" in warning and str(user) in warning for warning in config.warnings)


def test_a_later_valid_entry_replaces_an_invalid_one_and_back(tmp_path):
    broken = write(tmp_path / "broken.json", {"mcpServers": {"a": {"command": 3}}})
    good = write(tmp_path / "good.json", {"mcpServers": {"a": {"command": "x"}}})
    assert "a" in load_config(broken, good).servers
    config = load_config(good, broken)
    assert "a" in config.invalid
    assert "a" not in config.servers


def test_overrides_beat_files():
    data = {"mcpServers": {"a": {"command": "x"}, "b": {"command": 3}}}
    config = parse(
        data,
        overrides={
            "a": {"enabled": False, "startup_timeout": 5.0},
            "b": ServerSpec(name="b", command="fixed"),
            "c": {"command": "new"},
        },
    )
    assert not config.servers["a"].enabled
    assert config.servers["a"].startup_timeout == 5.0
    assert config.servers["b"].command == "fixed"
    assert "b" not in config.invalid
    assert config.servers["c"].command == "new"
    # A bad override makes its entry invalid, never the whole configuration.
    config = parse(data, overrides={"a": {"no_such_field": 1}})
    error = config.invalid["a"]
    assert (error.server, error.field) == ("a", "no_such_field")
    assert str(error) == "server 'a': no_such_field: not a field of ServerSpec (in overrides)"


# ------------------------------------------------------------------ secrets


def test_secrets_never_appear_in_errors_warnings_or_reprs(tmp_path):
    write(tmp_path / ".env", f"FROM_FILE={SECRET}\n")
    environ = {"SECRET_VAR": SECRET}
    data = {
        "mcpServers": {
            "env": {"command": "x", "env": {"TOKEN": "${SECRET_VAR}", "PLAIN": SECRET, "N": 1}},
            "headers": {
                "url": f"https://u:{SECRET}@example.com/mcp?key={SECRET}",
                "headers": {"Authorization": SECRET},
            },
            "file": {"command": "x", "envFile": ".env", "unknownField": SECRET},
            "bad-env": {"command": "x", "env": {"TOKEN": SECRET, "NULL": None}},
            "bad-header": {"url": "https://a", "headers": {"X": SECRET + "\n"}},
            "bad-args": {"command": "x", "args": SECRET},
            "bad-args-item": {"command": "x", "args": [SECRET, None]},
            "bad-command": {"command": [SECRET]},
            "bad-url": {"url": f"ftp://{SECRET}"},
            "bad-type": {"type": ["x", SECRET], "command": "x"},
            "bad-env-key": {"command": "x", "env": {f"A={SECRET}": "v"}},
            "bad-nul": {"command": "x", "env": {"A": SECRET + "\0"}},
            "bad-mixed": {"command": SECRET, "url": "https://" + SECRET},
        }
    }
    config = parse(data, environ=environ, base_dir=tmp_path)
    assert {"env", "headers", "file"} <= set(config.servers)
    assert config.servers["file"].env["FROM_FILE"] == SECRET  # it was read...
    assert len(config.invalid) == 10
    shown = [repr(config), *map(repr, config.servers.values()), *config.warnings]
    shown += [str(error) for error in config.invalid.values()] + [
        repr(error) for error in config.invalid.values()
    ]
    for text in shown:
        assert SECRET not in text  # ...and never shown


def test_a_secret_in_a_file_is_never_shown(tmp_path):
    path = write(tmp_path / "c.json", '{"mcpServers": {"a": {"command": "' + SECRET + '"}, }}')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert SECRET not in str(info.value)


# ------------------------------------------------------------------ discovery


def test_discovery_lists_user_and_project_files(tmp_path):
    home = tmp_path / "home"
    project = home / "src" / "proj"
    sub = project / "pkg" / "deep"
    sub.mkdir(parents=True)
    (project / ".git").mkdir()
    write(project / ".mcp.json", {"mcpServers": {}})
    write(project / "pkg" / ".cursor" / "mcp.json", {"mcpServers": {}})
    write(home / ".cursor" / "mcp.json", {"mcpServers": {}})
    write(home / ".mcp.json", {"mcpServers": {}})  # the home folder is no project
    found = discover_configs(sub, home, platform="linux", environ={})
    users = [d for d in found if d.scope == "user"]
    projects = [d for d in found if d.scope == "project"]
    assert found == users + projects  # the user's first, then the project's
    assert {d.client for d in users} == {"claude-desktop", "claude-code", "cursor", "vscode", "windsurf"}
    assert [d.path for d in users if d.exists] == [home / ".cursor" / "mcp.json"]
    assert users[0].path == home / ".config" / "Claude" / "claude_desktop_config.json"
    assert [(d.path, d.exists) for d in projects] == [
        (project / ".mcp.json", True),
        (project / ".vscode" / "mcp.json", False),
        (project / ".cursor" / "mcp.json", False),
        (project / "pkg" / ".cursor" / "mcp.json", True),
    ]
    assert home / ".mcp.json" not in [d.path for d in found]


def test_discovery_per_platform(tmp_path):
    mac = discover_configs(tmp_path, tmp_path / "h", platform="darwin", environ={})
    assert (
        mac[0].path
        == tmp_path / "h" / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    )
    win = discover_configs(
        tmp_path, tmp_path / "h", platform="win32", environ={"APPDATA": str(tmp_path / "ad")}
    )
    assert win[0].path == tmp_path / "ad" / "Claude" / "claude_desktop_config.json"
    xdg = discover_configs(
        tmp_path, tmp_path / "h", platform="linux", environ={"XDG_CONFIG_HOME": str(tmp_path / "x")}
    )
    assert xdg[0].path == tmp_path / "x" / "Claude" / "claude_desktop_config.json"


def test_discovery_without_a_git_root_lists_candidates_in_start(tmp_path):
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    write(tmp_path / "a" / ".mcp.json", {"mcpServers": {}})
    # The home folder bounds the walk: wherever the temporary folder lies (inside
    # a checkout, under a .git), nothing above it is looked at.
    found = [d for d in discover_configs(start, tmp_path, environ={}) if d.scope == "project"]
    assert (tmp_path / "a" / ".mcp.json", True) in [(d.path, d.exists) for d in found]
    assert [d.path for d in found if not d.exists] == [
        start / ".mcp.json",
        start / ".vscode" / "mcp.json",
        start / ".cursor" / "mcp.json",
    ]


def test_discovered_files_load_in_order(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "global"}}})
    write(project / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "project"}}})
    found = [d.path for d in discover_configs(project, home, environ={}) if d.exists]
    assert load_config(*found).servers["a"].command == "project"


def test_public_names():
    for name in (
        "load_config",
        "parse_config",
        "discover_configs",
        "DiscoveredConfig",
        "ServerSpec",
        "ConfigError",
    ):
        assert getattr(trio_mcp, name).__module__ == "trio_mcp"
    assert issubclass(ConfigError, trio_mcp.MCPError)


# ------------------------------------------------------------------ properties

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)
_field_names = st.sampled_from(
    [
        "type",
        "transport",
        "transportType",
        "command",
        "args",
        "env",
        "envFile",
        "cwd",
        "url",
        "serverUrl",
        "httpUrl",
        "headers",
        "enabled",
        "disabled",
        "timeout",
        "disabledTools",
        "includeTools",
        "excludeTools",
        "ws_url",
        "other",
    ]
)
_values = _json | st.sampled_from(
    ["${A}", "${A:-d}", "${input:x}", "${workspaceFolder}", "https://h/x", "stdio", "sse"]
)
_entry = st.dictionaries(_field_names, _values, max_size=6)
_documents = st.fixed_dictionaries(
    {},
    optional={
        "mcpServers": st.dictionaries(st.text(max_size=6), _entry | _json, max_size=4),
        "servers": st.dictionaries(st.text(max_size=6), _entry, max_size=3),
        "inputs": _json,
    },
)


def _check(data, **kwargs):
    try:
        config = parse_config(data, environ={"A": "a"}, **kwargs)
    except ConfigError as exc:
        str(exc)
        return
    assert isinstance(config, LoadedConfig)
    repr(config)
    for name, spec in config.servers.items():
        assert spec.name == name
        repr(spec)
        assert spec.transport in ("stdio", "http", "sse")
        assert (spec.command is not None) == (spec.transport == "stdio")
    for name, error in config.invalid.items():
        assert error.server == name


@pytest.mark.property
@settings(deadline=None)
@given(_json | _documents)
def test_any_json_value_gives_a_config_or_a_config_error(data):
    _check(data)
    _check(data, resolve_input=lambda input_id, definition: "v", workspace="/w", on_missing="keep")


@pytest.mark.property
@settings(deadline=None)
@given(st.text() | _documents.map(json.dumps).map(lambda text: text.replace('"', "'", 1)))
def test_any_text_gives_a_config_or_a_config_error(text):
    _check(text)
    _check(text, jsonc=True)


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True)


@pytest.mark.property
@given(st.text().filter(lambda text: "${" not in text), st.dictionaries(_names, st.text()))
def test_text_without_references_is_unchanged(text, environ):
    from trio_mcp._config.expand import Expander

    assert Expander(environ=environ).expand(text) == text


@pytest.mark.property
@given(st.lists(st.tuples(st.text().filter(lambda t: "${" not in t), _names), max_size=4), st.data())
def test_expansion_is_one_pass(parts, data):
    """Each reference becomes its value exactly, whatever the value holds (``${...}`` included)."""
    from trio_mcp._config.expand import Expander

    environ = {
        name: data.draw(st.text() | st.just("${" + name + "}") | st.just("${OTHER:-x}")) for _, name in parts
    }
    text = "".join(f"{literal}${{{name}}}" for literal, name in parts)
    expected = "".join(literal + environ[name] for literal, name in parts)
    assert Expander(environ=environ, fold_case=False).expand(text) == expected


@pytest.mark.property
@given(_documents)
def test_jsonc_stripping_keeps_plain_json(data):
    text = json.dumps(data, indent=1)
    assert json.loads(strip_jsonc(text)) == data


@pytest.mark.property
@given(_json, st.data())
def test_comments_and_trailing_commas_anywhere_leave_the_same_data(data, draw):
    # Each line of indented JSON ends outside any string: a comment may
    # follow it, and a comma may follow the last item of an object or list.
    lines = json.dumps(data, indent=1).split("\n")
    out = []
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        closing = after.lstrip()[:1] in ("}", "]")
        if closing and not line.endswith(("{", "[", ",")) and draw.draw(st.booleans()):
            line += ","
        comment = draw.draw(
            st.none()
            | st.text().filter(lambda c: "\n" not in c).map(lambda c: " //" + c)
            | st.text().filter(lambda c: "*/" not in c).map(lambda c: " /*" + c + "*/")
        )
        out.append(line + (comment or ""))
    text = "\n".join(out)
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text)
    assert json.loads(stripped) == data


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("[1, // a note, then the end\n]", [1]),
        ("[1, /* one */ /* two */\n]", [1]),
        ('{"a": "//, not a comment ]",}', {"a": "//, not a comment ]"}),
        ('{"a": "/* nor this */", // but this\n"b": 2}', {"a": "/* nor this */", "b": 2}),
        ("[1, // a bracket in a comment is no end ]\n2]", [1, 2]),
    ],
)
def test_jsonc_comments_and_trailing_commas_in_one_pass(text: str, plain: object) -> None:
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text)  # line and column numbers stay right
    assert json.loads(stripped) == plain


def test_jsonc_leaves_what_it_cannot_end_to_the_parser() -> None:
    # An unterminated comment or string stays, for the JSON parser to refuse.
    assert strip_jsonc("[1, /* open") == "[1, /* open"
    assert strip_jsonc('["open, ]') == '["open, ]'
    assert strip_jsonc("[1, // ]") == "[1,     "


# ------------------------------------------------------------------ files without servers


def test_the_discovery_recipe_reads_claude_codes_settings_without_servers(tmp_path):
    # Fails without the fix: ~/.claude.json without mcpServers (Claude Code's
    # settings on any machine where it runs) made load_config raise.
    home = tmp_path / "home"
    write(home / ".claude.json", {"numStartups": 12, "theme": "dark", "projects": {}})
    write(home / ".config" / "Claude" / "claude_desktop_config.json", {"globalShortcut": "Ctrl+Space"})
    write(home / ".cursor" / "mcp.json", {})
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / ".mcp.json", {"mcpServers": {"demo": {"command": "python"}}})
    found = discover_configs(project, home=home, environ={}, platform="linux")
    config = load_config(*(place.path for place in found if place.exists))
    assert list(config.servers) == ["demo"]
    assert not config.invalid
    assert not config.warnings
    assert str(home / ".claude.json") in config.sources


def test_a_settings_file_with_a_broken_server_map_is_still_refused(tmp_path):
    path = write(tmp_path / ".claude.json", {"mcpServers": ["not", "a", "map"]})
    with pytest.raises(ConfigError, match="is a list"):
        load_config(path)
    other = write(tmp_path / "servers.json", {"theme": "dark"})
    with pytest.raises(ConfigError, match="no 'mcpServers'"):
        load_config(other)


_FIELDS = sorted(field.name for field in attrs.fields(ServerSpec))
_overrides = st.dictionaries(
    st.sampled_from(["a", "b", "new"]),
    st.dictionaries(st.sampled_from([*_FIELDS, "no_such_field"]), _json, max_size=3),
    max_size=3,
)


@pytest.mark.property
@settings(deadline=None)
@given(_overrides)
def test_any_overrides_give_a_config_whose_bad_entries_are_invalid(overrides):
    # Every option is checked when the configuration is read: a bad value
    # makes its entry invalid, naming the field, and never raises.
    data = {"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://example.com/mcp"}}}
    config = parse(data, overrides=overrides)
    for name, change in overrides.items():
        if name in config.invalid:
            assert config.invalid[name].field in change
        else:
            spec = config.servers[name]
            assert spec.name == name
            repr(spec)

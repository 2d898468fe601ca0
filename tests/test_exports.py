"""The public surface of trio_mcp, and the rules that keep its core pure.

* Everything in ``trio_mcp.__all__`` exists, and classes and functions report
  ``trio_mcp`` as their module (tracebacks, docs and pickles show the public
  name, never a private module).
* The sans-io core (``_errors`` and ``_core``), and the rules the servers of
  the package share (``_serving.rules``), import no Trio, directly or
  through another module of the package.
* Every module of ``_core`` is listed in its package's docstring, imports
  only modules that compute (no I/O, no clock) and calls no I/O built-in.
* Every exception the package exports is an ``MCPError``, except the one
  that reports bugs in trio_mcp itself.
* ``import trio_mcp`` stays light.
* The command line's parsing (``trio_mcp.cli``: ``--help``, usage errors,
  a whole command line) loads neither Trio nor the client, and the modules
  of ``trio_mcp.cli`` import each other in one direction only.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path

import ast_support
import attrs
import pytest
import trio

import trio_mcp
import trio_mcp.types

PACKAGE = "trio_mcp"

#: The modules that must not import Trio, directly or transitively.
PURE_MODULES = (
    "trio_mcp._errors",
    "trio_mcp._public",
    "trio_mcp._core",
    # Every module of the core, whatever is added to it.
    *sorted(
        f"trio_mcp._core.{path.stem}"
        for path in (Path(__file__).parent.parent / "trio_mcp" / "_core").glob("*.py")
        if path.stem != "__init__"
    ),
    "trio_mcp._serving",
    "trio_mcp._serving.rules",
)

#: The exceptions the package promises to export.
EXCEPTIONS = (
    "MCPError",
    "SpawnFailed",
    "ServerGone",
    "RequestTimeout",
    "TransportClosed",
    "RpcError",
    "ProtocolError",
    "MessageTooLarge",
)

#: Exported exceptions that are deliberately not MCPErrors: they report bugs
#: in trio_mcp, which ``except MCPError`` must not hide.
NOT_MCP_ERRORS = frozenset({"TrioMCPInternalError"})

#: Packages that ``import trio_mcp`` must not pull in.
HEAVY = ("cattrs", "hypothesis", "jsonschema")


def _package_dir() -> Path:
    # Found without executing trio_mcp/__init__.py, so that the purity
    # checks below do not depend on the package importing cleanly.
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None
    assert spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations)))


# ------------------------------------------------------------ public names


def test_all_is_a_list_of_unique_strings() -> None:
    assert isinstance(trio_mcp.__all__, list | tuple)
    assert all(isinstance(name, str) for name in trio_mcp.__all__)
    assert len(set(trio_mcp.__all__)) == len(trio_mcp.__all__)


@pytest.mark.parametrize("name", trio_mcp.__all__)
def test_exported_name_exists_and_is_public(name: str) -> None:
    assert not name.startswith("_")
    assert hasattr(trio_mcp, name), f"trio_mcp.__all__ lists {name!r}, which trio_mcp lacks"
    obj = getattr(trio_mcp, name)
    if inspect.isclass(obj) or inspect.isroutine(obj):
        assert obj.__module__ == PACKAGE, (
            f"trio_mcp.{name}.__module__ is {obj.__module__!r}; the package should fix it up to {PACKAGE!r}"
        )


#: The whole public surface. A name added or removed is a decision, made here too.
PUBLIC = frozenset(
    {
        # the way in: where a server is, and the openers
        "Target", "ProcessTarget", "HTTPTarget", "StreamTarget",
        "open_client", "connect_client", "open_session", "connect_session",
        "open_stdio_client", "open_http_client",
        # options, each defined once
        "ClientOptions", "SessionOptions",
        # what the openers give
        "Client", "Session", "SessionStatistics", "Subscription", "Pages", "NotificationStream",
        # groups and configuration files
        "open_servers", "connect_servers", "open_server", "ServerGroup", "RestartPolicy", "ServerStatus", "ServerEvent",
        "Listed", "ServerSpec", "ConfigSource", "LoadedConfig", "DiscoveredConfig",
        "load_config", "parse_config", "discover_configs",
        # errors
        "MCPError", "SpawnFailed", "ServerGone", "TransportClosed", "RequestTimeout", "RpcError",
        "ProtocolError", "MessageTooLarge", "VersionMismatch", "NotSupported", "InputRequestFailed",
        "OutputValidationError", "ConfigError", "UnknownName", "HTTPError", "ConnectionFailed",
        "AuthRequired", "ServerBusy", "SessionExpired", "TrioMCPInternalError",
        "TaskError", "TaskFailed", "TaskCancelled", "TaskGone",
        # tasks
        "ToolTask", "Task", "TaskRef",
    }
)  # fmt: skip

#: The protocol's types, in ``trio_mcp.types`` (as ``mcp.types`` in the official SDK).
TYPES = frozenset(
    {
        "Annotations", "AudioContent", "BlobResourceContents", "CallToolResult", "CompleteResult",
        "Completion", "ContentBlock", "CreateMessageParams", "CreateMessageResult", "DiscoverResult",
        "ElicitFormParams", "ElicitRequestParams", "ElicitResult", "ElicitUrlParams", "EmbeddedResource",
        "GetPromptResult", "Icon", "ImageContent", "Implementation", "InitializeResult", "InputRequest",
        "InputRequiredResult", "ListPromptsResult", "ListResourcesResult", "ListResourceTemplatesResult",
        "ListRootsResult", "ListToolsResult", "ModelHint", "ModelPreferences", "Prompt", "PromptArgument",
        "PromptMessage", "ReadResourceResult", "Resource", "ResourceLink", "ResourceTemplate", "Root",
        "SamplingMessage", "ServerCapabilities", "TextContent", "TextResourceContents", "Tool",
        "ToolAnnotations", "ToolChoice", "ToolResultContent", "ToolUseContent", "UnknownContent",
    }
)  # fmt: skip

#: The public members of the two classes every user meets: narrow on purpose
#: (the session's callbacks for its channel and its hooks for a client are
#: private; a client is made by the openers only).
SESSION_MEMBERS = frozenset(
    {
        "aclose", "check_usable", "closing", "failure", "name", "notifications", "notify", "pid",
        "request", "request_timeout", "statistics", "stderr_tail", "wait_failed",
    }
)  # fmt: skip
CLIENT_MEMBERS = frozenset(
    {
        "aclose", "call_tool", "complete", "discover", "failure", "get_prompt", "input_timeout",
        "invalidate_cache", "iter_prompts", "iter_resource_templates", "iter_resources", "iter_tools",
        "list_prompts", "list_prompts_page", "list_resource_templates", "list_resource_templates_page",
        "list_resources", "list_resources_page", "list_tools", "list_tools_page", "listen", "max_rounds",
        "name", "pid", "ping", "read_resource", "request", "set_logging_level", "statistics",
        "stderr_tail", "subscribe_resource", "unsubscribe_resource", "wait_failed",
        "tool_task", "resume_task", "get_task", "cancel_task", "list_tasks",
        # attributes set as the handshake ends
        "session", "era", "protocol_version", "server_info", "server_capabilities", "instructions",
        "discover_result", "options", "client_info", "log_level",
    }
)  # fmt: skip


def test_the_public_surface_is_the_one_decided() -> None:
    assert set(trio_mcp.__all__) == PUBLIC
    assert set(trio_mcp.types.__all__) == TYPES


@pytest.mark.parametrize("name", sorted(TYPES))
def test_a_model_is_in_types_and_says_so(name: str) -> None:
    obj = getattr(trio_mcp.types, name)
    if inspect.isclass(obj):
        assert obj.__module__ == "trio_mcp.types"
        assert repr(obj) == f"<class 'trio_mcp.types.{name}'>"


def test_the_old_spelling_of_a_model_works_with_a_deprecation_warning() -> None:
    with pytest.warns(
        DeprecationWarning, match=r"trio_mcp\.Tool is deprecated.* use trio_mcp\.types\.Tool$"
    ) as caught:
        old = trio_mcp.Tool
    assert old is trio_mcp.types.Tool
    # The warning points at the line that used the old name, here.
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning, match=r"trio_mcp\.types\.CallToolResult") as caught:
        from trio_mcp import CallToolResult
    assert CallToolResult is trio_mcp.types.CallToolResult
    assert caught[0].filename == __file__
    # Each use warns, and the old names are no longer part of the surface.
    with pytest.warns(DeprecationWarning, match="trio_mcp.types.Tool"):
        assert trio_mcp.Tool is old
    assert not TYPES & set(dir(trio_mcp))
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        trio_mcp.NoSuchModel  # noqa: B018


def test_the_models_module_loads_neither_the_wire_format_nor_trio() -> None:
    code = "import json, sys, trio_mcp.types; print(json.dumps(sorted(sys.modules)))"
    loaded = set(_fresh_interpreter_modules(code))
    assert not {"cattrs", "trio"} & loaded


#: Routes into the package that do not go through a name of the top level.
FIRST_IMPORTS = (
    "trio_mcp.testing",
    "trio_mcp._client",
    "trio_mcp._models",
    "trio_mcp.cli._run",
    "trio_mcp._group",
)

_MODULE_PROBE = """
import importlib, inspect, json, sys
importlib.import_module(FIRST)
from trio_mcp import _public
def wrong(names, public):
    found = {}
    for name, home in names:
        module = sys.modules.get("trio_mcp." + home)
        obj = getattr(module, name, None) if module is not None else None
        if (inspect.isclass(obj) or inspect.isroutine(obj)) and obj.__module__ != public:
            found[name] = obj.__module__
    return found
types = [(name, "_models.types") for name in _public.TYPES]
before = {**wrong(_public.ROOT.items(), "trio_mcp"), **wrong(types, "trio_mcp.types")}
for home in set(_public.ROOT.values()):
    importlib.import_module("trio_mcp." + home)
after = {**wrong(_public.ROOT.items(), "trio_mcp"), **wrong(types, "trio_mcp.types")}
print(json.dumps([before, after]))
"""


@pytest.mark.parametrize("first", FIRST_IMPORTS)
def test_a_public_name_says_its_public_module_whatever_was_imported_first(first: str) -> None:
    """As trio's ``fixup_module_metadata``: set as the defining module is imported, not as a name is touched."""
    proc = subprocess.run(
        [sys.executable, "-c", _MODULE_PROBE.replace("FIRST", repr(first))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    before, after = json.loads(proc.stdout.strip().splitlines()[-1])
    assert before == {}
    assert after == {}


def test_a_model_pickles_under_its_public_name() -> None:
    import pickle

    block = trio_mcp.types.TextContent(text="hi")
    data = pickle.dumps(block)
    assert b"trio_mcp.types" in data
    assert b"_models" not in data
    assert pickle.loads(data) == block


def test_a_public_class_s_own_methods_say_its_public_module() -> None:
    assert trio_mcp.Client.call_tool.__module__ == "trio_mcp"
    assert trio_mcp.ProcessTarget.__repr__.__module__ == "trio_mcp"
    assert trio_mcp.types.CallToolResult.__module__ == "trio_mcp.types"


def _members(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


async def test_a_session_and_a_client_show_only_their_public_members() -> None:
    from trio_mcp.testing import FakeServer, open_fake_client

    async with open_fake_client(FakeServer()) as client:
        assert _members(client) == CLIENT_MEMBERS
        assert _members(client.session) == SESSION_MEMBERS


def test_a_client_is_made_by_the_openers_only() -> None:
    with pytest.raises(TypeError, match="open_client"):
        trio_mcp.Client()


def test_no_opener_or_class_takes_loose_keyword_options() -> None:
    """Options travel as one typed object (`ClientOptions`, `SessionOptions`), never as ``**options``.

    Every public function, every public class's constructor, and every
    method of the client and the session.
    """
    for name in sorted(PUBLIC):
        obj = getattr(trio_mcp, name)
        callables = [obj] if inspect.isfunction(obj) else []
        if inspect.isclass(obj) and "__init__" in vars(obj):
            callables.append(obj.__init__)
        if obj in (trio_mcp.Client, trio_mcp.Session):
            callables += [member for _, member in inspect.getmembers(obj, inspect.isfunction)]
        for function in callables:
            kinds = {parameter.kind for parameter in inspect.signature(function).parameters.values()}
            assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{name}.{function.__name__} takes **kwargs"


def test_no_module_defines_a_typed_dict() -> None:
    """An option is a field of its options class and nothing else: no parallel TypedDict."""
    found = [
        f"{path.name}: {node.name}"
        for path in sorted(_package_dir().rglob("*.py"))
        for node in ast.walk(ast_support.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).endswith("TypedDict") for base in node.bases)
    ]
    assert found == []


#: The one exported exception that cannot live in ``_errors``: it is a
#: `trio.TooSlowError` too, and ``_errors`` imports no Trio (the pure core
#: raises its exceptions, and ``import trio_mcp`` loads only them).
OUTSIDE_ERRORS = {"RequestTimeout": "trio_mcp._session.session"}


def test_every_exception_class_is_defined_in_errors() -> None:
    """One exception tree in one module, so that one docs page can draw it."""
    homes = {}
    for path in sorted(_package_dir().rglob("*.py")):
        module = ".".join((PACKAGE, *path.relative_to(_package_dir()).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast_support.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in PUBLIC:
                homes[node.name] = module
    for name in sorted(PUBLIC):
        obj = getattr(trio_mcp, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            assert homes[name] == OUTSIDE_ERRORS.get(name, "trio_mcp._errors"), name


# ------------------------------------------------------------ exceptions


@pytest.mark.parametrize("name", EXCEPTIONS)
def test_exception_is_exported_and_is_an_mcp_error(name: str) -> None:
    assert name in trio_mcp.__all__
    exc = getattr(trio_mcp, name)
    assert inspect.isclass(exc)
    assert issubclass(exc, trio_mcp.MCPError)


def test_every_other_exported_exception_is_an_mcp_error() -> None:
    for name in trio_mcp.__all__:
        obj = getattr(trio_mcp, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            if name in NOT_MCP_ERRORS:
                assert not issubclass(obj, trio_mcp.MCPError), f"trio_mcp.{name} should not be an MCPError"
            else:
                assert issubclass(obj, trio_mcp.MCPError), f"trio_mcp.{name} is not an MCPError"


def test_mcp_error_is_an_exception() -> None:
    # Not a BaseException: `except Exception` must catch it, and it must never
    # look like a cancellation or KeyboardInterrupt.
    assert issubclass(trio_mcp.MCPError, Exception)


def test_request_timeout_is_a_trio_too_slow_error() -> None:
    # Code written for `trio.fail_after` catches it unchanged.
    assert issubclass(trio_mcp.RequestTimeout, trio.TooSlowError)
    assert issubclass(trio_mcp.RequestTimeout, trio_mcp.MCPError)


# ------------------------------------------------------------ pure core


def _module_path(module: str) -> Path | None:
    """The source file of a module of the package, or None if there is none."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = _package_dir().joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _resolve_relative(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a (possibly relative) ``from`` import reads."""
    if node.level == 0:
        return node.module or ""
    path = _module_path(module)
    assert path is not None
    package = module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str) -> tuple[list[str], list[str]]:
    """Return (top-level packages imported, modules of this package imported)."""
    path = _module_path(module)
    assert path is not None, f"no source for {module}"
    tree = ast_support.parse(path.read_text(encoding="utf-8"), filename=str(path))
    external: list[str] = []
    internal: list[str] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_relative(module, node)
            # `from . import _x` reads the submodule `_x`; any other name read
            # from a package comes from its __init__.py.
            submodules = [f"{source}.{alias.name}" for alias in node.names]
            targets = [name for name in submodules if _module_path(name) is not None]
            if len(targets) < len(submodules):
                targets.append(source)
        for target in targets:
            top = target.partition(".")[0]
            if top == PACKAGE:
                internal.append(target)
            else:
                external.append(top)
    return external, internal


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_does_not_import_trio(module: str) -> None:
    """Walk the module and every package module it imports; none may import trio.

    Every import statement counts, those under ``if TYPE_CHECKING:`` and inside
    functions included.
    """
    seen: set[str] = set()
    stack = [(module, (module,))]
    while stack:
        current, chain = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        external, internal = _imports(current)
        via = " -> ".join(chain)
        assert "trio" not in external, f"{via} imports trio"
        # `from . import name` of a name that is not a submodule reads the
        # package's __init__.py (which imports the Trio edge): that fails.
        stack.extend((target, (*chain, target)) for target in internal if _module_path(target) is not None)


def test_pure_modules_import_without_trio_at_run_time() -> None:
    """Import the pure modules alone in a fresh interpreter and look at sys.modules.

    A stand-in package object is installed first, so that trio_mcp/__init__.py
    (which imports the Trio edge) does not run.
    """
    code = f"""
import json, sys, types
package = types.ModuleType({PACKAGE!r})
package.__path__ = [{str(_package_dir())!r}]
sys.modules[{PACKAGE!r}] = package
import importlib
for name in {list(PURE_MODULES)!r}:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""
    loaded = _fresh_interpreter_modules(code)
    assert "trio" not in {name.partition(".")[0] for name in loaded}


#: The modules of the core, whatever is added to it.
CORE_MODULES = tuple(name for name in PURE_MODULES if name.startswith(f"{PACKAGE}._core."))

#: Everything the core may import from outside the package: modules that
#: compute, and none that reads or writes a file, a socket, a process, the
#: environment or a clock (``os``, ``sys``, ``io``, ``time``, ``socket``,
#: ``subprocess``, ``threading``, ``trio``, ``asyncio`` are all absent). A
#: new entry must be such a module.
CORE_MAY_IMPORT = frozenset(
    {
        "__future__",
        "attrs",
        "base64",
        "collections",
        "collections.abc",
        "email.utils",
        "enum",
        "hashlib",
        "hmac",
        "importlib",
        "ipaddress",
        "json",
        "math",
        "orjson",
        "random",
        "re",
        "types",
        "typing",
        "urllib.parse",
    }
)

#: Built-in functions that do I/O.
IO_BUILTINS = frozenset({"open", "print", "input", "breakpoint"})


def test_core_lists_every_module_of_the_core() -> None:
    """``_core/__init__.py`` names each module of the core, so that a reader finds every room there."""
    source = (_package_dir() / "_core" / "__init__.py").read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast_support.parse(source)) or ""
    assert [name for name in CORE_MODULES if f"`~{name}`" not in docstring] == []


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_no_io(module: str) -> None:
    """A module of the core imports only modules that compute, and calls no I/O built-in.

    From the package it may import the core, the exceptions and ``_public``
    (the table of public names, which imports nothing) alone; every import
    statement counts, those under ``if TYPE_CHECKING:`` and inside
    functions included.
    """
    path = _module_path(module)
    assert path is not None
    problems = []
    for node in ast.walk(ast_support.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [_resolve_relative(module, node)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IO_BUILTINS:
            problems.append(f"line {node.lineno} calls {node.func.id}()")
        for name in names:
            if name.partition(".")[0] == PACKAGE:
                if not (
                    name.startswith(f"{PACKAGE}._core")
                    or name in (f"{PACKAGE}._errors", f"{PACKAGE}._public")
                ):
                    problems.append(f"line {node.lineno} imports {name}, outside the core")
            elif name not in CORE_MAY_IMPORT:
                problems.append(f"line {node.lineno} imports {name}")
    assert problems == []


# ------------------------------------------------------------ import weight


def _fresh_interpreter_modules(code: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    modules: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return modules


def test_import_is_light() -> None:
    code = f"import json, sys, {PACKAGE}; print(json.dumps(sorted(sys.modules)))"
    loaded = {name.partition(".")[0] for name in _fresh_interpreter_modules(code)}
    assert not loaded & set(HEAVY), f"import {PACKAGE} loads {sorted(loaded & set(HEAVY))}"


@pytest.mark.parametrize(
    ("code", "absent"),
    [
        # The models, the options and the targets, without the wire format.
        (
            "import trio_mcp.types; trio_mcp.ClientOptions(protocol='2025-11-25'); trio_mcp.ProcessTarget('s')",
            ("trio_mcp._models.codec", "cattrs", "trio"),
        ),
        # A program that opens sessions, without the client or the models.
        (
            "from trio_mcp import open_session, ProcessTarget, SessionOptions, ClientOptions",
            ("trio_mcp._client", "trio_mcp._models", "cattrs", "httpx2"),
        ),
    ],
)
def test_each_part_loads_only_what_it_needs(code: str, absent: tuple[str, ...]) -> None:
    loaded = _fresh_interpreter_modules(f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))")
    assert [
        name for name in loaded if name in absent or name.startswith(tuple(f"{a}." for a in absent))
    ] == []
    assert "trio_mcp._targets" in loaded


def test_the_names_for_type_checkers_are_the_lazy_names() -> None:
    """``__init__``'s TYPE_CHECKING imports and its table of lazy names list the same names, each from its module."""
    tree = ast_support.parse((_package_dir() / "__init__.py").read_text())
    guarded = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    static = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert static == trio_mcp._LAZY


# ------------------------------------------------------------ the command line

#: What parsing the command line must not load (``--help`` and usage errors
#: are answered at once; the client comes with the command that needs it).
CLI_PARSING_MUST_NOT_LOAD = ("trio", "cattrs", f"{PACKAGE}._client", f"{PACKAGE}.cli._run")

#: The modules of ``trio_mcp.cli``, lowest first: each imports only modules
#: before it in this list (the package itself never).
CLI_LAYERS = (
    "_values",
    "_names",
    "_args",
    "_render",
    "_console",
    "_forms",
    "_failures",
    "_run",
    "_tasks",
    "_shell",
    "_configs",
    "_login",
)

_CLI_PROBE = """
import contextlib, io, json, sys
import trio_mcp.cli as cli
outcome = {}
sys.argv = ["trio-mcp", "--help"]
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        cli.main()
    except SystemExit as exc:
        outcome["help"] = [exc.code, "exit status:" in out.getvalue()]
with contextlib.redirect_stderr(io.StringIO()) as err:
    outcome["usage"] = [cli.run(["call", "echo", "text"]), err.getvalue()]
options = cli.parse_args(
    ["--timeout", "5", "call", "add", "a=1", "b=x", "--json", '{"c": [3]}', "-v",
     "--env", "K=V", "--protocol", "2025-11-25", "--", "my-server", "--stdio"]
)
outcome["call"] = [options.command, options.target, options.arguments, options.server,
                   options.timeout, options.env, options.protocol, options.verbose]
EXTRA
outcome["modules"] = sorted(sys.modules)
print(json.dumps(outcome))
"""


def _cli_probe(extra: str = "") -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _CLI_PROBE.replace("EXTRA", extra)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    outcome: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return outcome


def _in(modules: object, name: str) -> bool:
    """Whether the module or package ``name`` (or one of its submodules) is among ``modules``."""
    assert isinstance(modules, list)
    return any(module == name or module.startswith(name + ".") for module in modules)


def test_cli_parsing_loads_neither_trio_nor_the_client() -> None:
    """``--help``, a usage error and a whole ``call`` command line, in a fresh interpreter."""
    outcome = _cli_probe()
    # The three really happened...
    assert outcome["help"] == [0, True]
    usage = outcome["usage"]
    assert isinstance(usage, list)
    assert usage[0] == 2
    assert "expected an argument as KEY=VALUE, got 'text'" in usage[1]
    assert outcome["call"] == [
        "call",
        "add",
        {"c": [3], "a": 1, "b": "x"},
        ["my-server", "--stdio"],
        5,
        {"K": "V"},
        "2025-11-25",
        True,
    ]
    # ...and loaded none of it.
    assert [name for name in CLI_PARSING_MUST_NOT_LOAD if _in(outcome["modules"], name)] == []
    # The probe does see each of them once loaded (the client comes with the first
    # opener that makes one, the converter, cattrs, with the first result that needs it).
    ran = _cli_probe("import trio_mcp.cli._run, trio_mcp._client, cattrs")
    assert [name for name in CLI_PARSING_MUST_NOT_LOAD if _in(ran["modules"], name)] == list(
        CLI_PARSING_MUST_NOT_LOAD
    )


def test_cli_parsing_module_never_imports_trio_or_the_client() -> None:
    """``cli._args``, and every module of the package it imports, at any depth, in any branch."""
    seen: set[str] = set()
    stack = [(f"{PACKAGE}.cli._args", (f"{PACKAGE}.cli._args",))]
    while stack:
        current, chain = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        external, internal = _imports(current)
        via = " -> ".join(chain)
        for name in CLI_PARSING_MUST_NOT_LOAD:
            assert name not in external, f"{via} imports {name}"
            assert name not in internal, f"{via} imports {name}"
        stack.extend((target, (*chain, target)) for target in internal if _module_path(target) is not None)
    assert f"{PACKAGE}._core.eras" in seen  # the walk did follow the imports


def test_cli_modules_import_each_other_one_way() -> None:
    """Each module of ``trio_mcp.cli`` imports only those below it; the package imports ``_run`` lazily."""
    for rank, name in enumerate(CLI_LAYERS):
        _, internal = _imports(f"{PACKAGE}.cli.{name}")
        siblings = {target for target in internal if target.startswith(f"{PACKAGE}.cli")}
        allowed = {f"{PACKAGE}.cli.{below}" for below in CLI_LAYERS[:rank]}
        assert siblings <= allowed, f"cli.{name} imports {sorted(siblings - allowed)}"
    init = _module_path(f"{PACKAGE}.cli")
    assert init is not None
    tree = ast_support.parse(init.read_text(encoding="utf-8"))
    # At module level, the package reads the parser only; run() imports _run when a command runs.
    eager = {
        _resolve_relative(f"{PACKAGE}.cli", node) for node in tree.body if isinstance(node, ast.ImportFrom)
    }
    assert {name for name in eager if name.startswith(PACKAGE)} == {f"{PACKAGE}.cli._args"}
    _, everything = _imports(f"{PACKAGE}.cli")
    assert f"{PACKAGE}.cli._run" in everything


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # the parent is a module, not a package
        return False


def _private_imports() -> list[str]:
    """Every ``from M import _name`` in the package where ``_name`` is not a module.

    A module's ``_private`` names are its own: another module may import the
    module (``from . import _core``), never a private name defined in it.
    """
    package = Path(trio_mcp.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        own_package = ".".join(parts[:-1])
        for node in ast.walk(ast_support.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = own_package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                if _is_module(f"{source}.{name}"):
                    continue  # a module, not a private name
                if source != module:
                    found.append(f"{module} imports {name} from {source}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    assert _private_imports() == []


# ------------------------------------------------------------ closed choices

#: Each option that takes one of a few strings: its choices, as type checkers and the check at run time see them.
CHOICES = {
    "protocol": ("ProtocolChoice", "trio_mcp._options.PROTOCOLS"),
    "log_level": ("LogLevel", "trio_mcp._core.eras.LOG_LEVELS"),
    "validate_output": ("OutputCheck", "trio_mcp._core.outputs.MODES"),
}


def _tuple(dotted: str) -> tuple[str, ...]:
    module, _, name = dotted.rpartition(".")
    value: tuple[str, ...] = getattr(importlib.import_module(module), name)
    return value


@pytest.mark.parametrize("field", sorted(CHOICES))
def test_a_closed_choice_is_a_literal_type_that_agrees_with_the_check(field: str) -> None:
    import typing

    from trio_mcp import _options

    alias, values = CHOICES[field]
    choices = typing.get_args(getattr(_options, alias))
    assert choices == _tuple(values)
    annotation = {attribute.name: attribute.type for attribute in attrs.fields(trio_mcp.ClientOptions)}[field]
    assert annotation in (alias, f"{alias} | None")
    for choice in choices:
        assert getattr(trio_mcp.ClientOptions(**{field: choice}), field) == choice
    with pytest.raises(ValueError, match=rf"^{field} must be .*{choices[-1]}.*not 'nonsense'$"):
        trio_mcp.ClientOptions(**{field: "nonsense"})


@pytest.mark.slow
def test_a_type_checker_refuses_a_choice_that_is_not_one(tmp_path: Path) -> None:
    """``ClientOptions(protocol="2025-13-01")`` is caught before it runs (mypy --strict)."""
    pytest.importorskip("mypy")
    program = (
        "import trio_mcp\n"
        'trio_mcp.ClientOptions(protocol="2025-11-25", log_level="info", validate_output="strict")\n'
        'trio_mcp.ClientOptions(protocol="2025-13-01")\n'
        'trio_mcp.ClientOptions(log_level="verbose")\n'
        'trio_mcp.ClientOptions(validate_output="loud")\n'
    )
    (tmp_path / "program.py").write_text(program)
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nstrict = True\nmypy_path = {_package_dir().parent}\n")
    # In a process of its own: mypy raises the interpreter's recursion limit for good.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(tmp_path / "program.py"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    stdout, stderr, status = run.stdout, run.stderr, run.returncode
    errors = sorted(int(line.split(":")[1]) for line in stdout.splitlines() if ": error:" in line)
    assert status == 1, stdout + stderr
    assert errors == [3, 4, 5], stdout

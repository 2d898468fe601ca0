"""The public surface of trio_mcp, and the rules that keep its core pure.

* Everything in ``trio_mcp.__all__`` exists, and classes and functions report
  ``trio_mcp`` as their module (tracebacks, docs and pickles show the public
  name, never a private module).
* The sans-io core (``_errors`` and ``_core``) imports no Trio,
  directly or through another module of the package.
* Every exception the package exports is an ``MCPError``, except the one
  that reports bugs in trio_mcp itself.
* ``import trio_mcp`` stays light.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio

import trio_mcp

PACKAGE = "trio_mcp"

#: The modules that must not import Trio, directly or transitively.
PURE_MODULES = (
    "trio_mcp._errors",
    "trio_mcp._core",
    "trio_mcp._core.framing",
    "trio_mcp._core.jsonrpc",
    "trio_mcp._core.eras",
    "trio_mcp._core.negotiation",
    "trio_mcp._core.cache",
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
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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


def test_the_names_for_type_checkers_are_the_lazy_names() -> None:
    """``__init__``'s TYPE_CHECKING imports and its table of lazy names list the same names, each from its module."""
    tree = ast.parse((_package_dir() / "__init__.py").read_text())
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

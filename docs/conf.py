"""Sphinx configuration for the trio_mcp documentation.

Build with ``nox -s docs`` (``sphinx-build -W -n``): every warning is an
error, and every cross-reference must resolve.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
# Document the source tree even when the package is not installed.
sys.path.insert(0, str(ROOT))

project = "trio-mcp"
author = "The trio-mcp contributors"
copyright = "the trio-mcp contributors"
release = str(runpy.run_path(str(ROOT / "trio_mcp" / "_version.py"))["__version__"])
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxcontrib_trio",
]

# The build must work offline, so there is no intersphinx: references to
# other projects cannot resolve. The python domain already accepts builtins
# (`int`, `None`, `typing.Any`); these patterns let the rest through.
nitpicky = True
nitpick_ignore_regex = [
    # Trio and attrs types in signatures and prose (trio.Nursery,
    # trio.TooSlowError, trio.Process, attrs.frozen, ...).
    (r"py:.*", r"trio\..*"),
    (r"py:.*", r"attrs\..*"),
    # httpx2 types in the HTTP openers' signatures and prose (httpx2.Auth,
    # httpx2.AsyncClient, ...).
    (r"py:.*", r"httpx2\..*"),
    # Hypothesis's strategies, returned by trio_mcp.testing.strategies.
    (r"py:.*", r"(hypothesis\.strategies\.)?SearchStrategy"),
    # Standard-library names outside builtins, as annotations spell them.
    (r"py:.*", r"(collections\.abc|os|pathlib|subprocess|signal|contextlib|types)\..*"),
    # `True` and `False` in prose (`None` already resolves).
    (r"py:obj", r"True|False"),
]
# Private types that signatures name, with nothing public to link to: the
# TypedDicts that type the openers' ``**options`` for type checkers (the
# options themselves are documented with their classes, ClientOptions and
# the rest), and the message channel a Session drives (sessions come from
# the openers). Evaluated annotations name them in full, unevaluated ones
# (a name imported only for type checking stops the evaluation) by their
# bare names.
nitpick_ignore_regex += [
    (r"py:class", r"(trio_mcp\._options\.)?\w+Kwargs"),
    (r"py:class", r"(trio_mcp\._channel\.)?Channel"),
    (r"py:class", r"Mapping"),
    # What the fake server makes its FakeRequest objects of (tests get them).
    (r"py:class", r"(trio_mcp\.testing\._request\.)?Link"),
    (r"py:class", r"(trio_mcp\._serving\.server\.)?Request"),
    # The process channel a StdioTransport is made with (by the openers).
    (r"py:class", r"(trio_mcp\._transports\.process\.)?ProcessChannel"),
    # The Literal aliases of the configuration model (their values are listed
    # where they are used) and the callback type of ``${input:...}``.
    (r"py:class", r"(trio_mcp\._config\.\w+\.)?(Transport|ConfigScope|OnMissing|ResolveInput|Overrides)"),
    # The type variable of `Pages` (``Pages[Tool]`` yields `Tool` items).
    (r"py:class", r"trio_mcp\._client\.pages\.T"),
    # The Literal aliases of the server groups' and the configuration's
    # fields (the docstrings list their values), and `Listed`'s type variable.
    (
        r"py:class",
        r"(trio_mcp\.(_group\.group|_group\.records|_core\.restart|_config\.spec)\.)?(ServerState|RestartMode|Jitter|Transport|T)",
    ),
    (r"py:class", r"random\.Random"),
]

default_role = "py:obj"
primary_domain = "py"

autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

exclude_patterns = ["_build"]
templates_path: list[str] = []

html_theme = "alabaster"
html_title = f"trio-mcp {release}"
html_static_path: list[str] = []


def _merge_private_module_sources(app: Sphinx) -> None:
    """Let autodoc find attribute docstrings of the re-exported classes.

    ``trio_mcp/__init__.py`` sets ``__module__`` of every public object to
    ``"trio_mcp"`` (and ``trio_mcp.testing`` to its own name), so autodoc
    looks for attribute docstrings (the string under an attribute) and for
    the source order of members in the public module, where they are not.
    Add what the private modules hold to the analysis of the public one.
    """
    from sphinx.pycode import ModuleAnalyzer

    package = ROOT / "trio_mcp"
    publics = {
        # The private modules, and the modules of the private packages.
        "trio_mcp": [*package.glob("_*.py"), *package.glob("_*/*.py")],
        # The private modules of the public package trio_mcp.testing.
        "trio_mcp.testing": [*package.glob("testing/_*.py")],
        # The models, which say trio_mcp.types.
        "trio_mcp.types": [package / "_models" / "types.py"],
    }
    for name, paths in publics.items():
        public = ModuleAnalyzer.for_module(name)
        public.analyze()
        for path in sorted(paths):
            if path.parent == package and path.name == "__init__.py":
                continue
            parts = path.relative_to(package).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            private = ModuleAnalyzer.for_module(".".join(("trio_mcp", *parts)))
            private.analyze()
            for key, doc in private.attr_docs.items():
                public.attr_docs.setdefault(key, doc)
            for key, order in private.tagorder.items():
                public.tagorder.setdefault(key, order)


def _model_signature(
    app: Sphinx,
    what: str,
    name: str,
    obj: object,
    options: object,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str, str | None] | None:
    """Give the attrs models of ``trio_mcp`` the signature their users see.

    With ``autodoc_preserve_defaults``, autodoc reads the defaults from the
    source of ``__init__``, which for an attrs class is generated code
    (``attr_dict['title'].default``, ``NOTHING`` for a factory). Spell the
    signature out from the fields instead, with the annotations as written.
    """
    import attrs

    if what != "class" or not isinstance(obj, type) or not attrs.has(obj):
        return None
    if obj.__module__ not in ("trio_mcp", "trio_mcp.types"):
        return None
    written: dict[str, object] = {}
    for klass in reversed(obj.__mro__):
        written.update(getattr(klass, "__annotations__", {}))
    parts: list[str] = []
    star = False
    for field in attrs.fields(obj):
        if not field.init:
            continue
        if field.kw_only and not star:
            parts.append("*")
            star = True
        text = field.alias or field.name
        annotation = written.get(field.name)
        if isinstance(annotation, str):
            text += f": {annotation}"
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            text += f" = {default.factory()!r}"  # type: ignore[call-arg]
        elif default is not attrs.NOTHING:
            text += f" = {default!r}"
        parts.append(text)
    return f"({', '.join(parts)})", return_annotation


def _model_reference(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a bare `CallToolResult` (or `CallToolResult.text`) in a guide to ``trio_mcp.types``.

    The guides are written in ``trio_mcp`` (``.. currentmodule:: trio_mcp``)
    and name the models by their short names, as their users read them.
    """
    from trio_mcp._public import TYPES

    if node.get("refdomain") != "py":
        return None
    target = str(node["reftarget"]).removeprefix("trio_mcp.")
    if target.split(".", 1)[0] not in TYPES:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], f"trio_mcp.types.{target}", node, contnode
    )


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", _merge_private_module_sources)
    app.connect("missing-reference", _model_reference)
    app.connect("autodoc-process-signature", _model_signature)

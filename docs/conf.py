"""Sphinx configuration for the trio_mcp documentation.

Build with ``nox -s docs`` (``sphinx-build -W -n``): every warning is an
error, and every cross-reference must resolve.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import TYPE_CHECKING

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
    # Standard-library names outside builtins, as annotations spell them.
    (r"py:.*", r"(collections\.abc|os|pathlib|subprocess|signal|contextlib|types)\..*"),
    # `True` and `False` in prose (`None` already resolves).
    (r"py:obj", r"True|False"),
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
    ``"trio_mcp"``, so autodoc looks for attribute docstrings (the string
    under an attribute) and for the source order of members in
    ``trio_mcp/__init__.py``, where they are not. Add what the private
    modules hold to the analysis of the package.
    """
    from sphinx.pycode import ModuleAnalyzer

    public = ModuleAnalyzer.for_module("trio_mcp")
    public.analyze()
    for path in sorted((ROOT / "trio_mcp").glob("_*.py")):
        if path.name == "__init__.py":
            continue
        private = ModuleAnalyzer.for_module(f"trio_mcp.{path.stem}")
        private.analyze()
        for key, doc in private.attr_docs.items():
            public.attr_docs.setdefault(key, doc)
        for name, order in private.tagorder.items():
            public.tagorder.setdefault(name, order)


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", _merge_private_module_sources)

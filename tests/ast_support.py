"""``ast.parse`` for the tests, robust to a CPython 3.11 quirk.

CPython 3.11 keeps the depth counter of its AST conversion in state shared by
the whole process. A test that makes some conversion fail half-way (deep
nesting elsewhere in the suite) can leave that counter off, and every later
``ast.parse`` then raises ``SystemError: AST constructor recursion depth
mismatch``. That says nothing about the source being parsed: parse it again
in a fresh interpreter, and bring the tree back.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys

_CHILD = "import ast, pickle, sys; sys.stdout.buffer.write(pickle.dumps(ast.parse(sys.stdin.read())))"


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)``, in a fresh interpreter when this one's AST state is off."""
    try:
        return ast.parse(source, filename=filename)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], input=source.encode(), capture_output=True, timeout=60, check=True
    )
    tree = pickle.loads(done.stdout)
    assert isinstance(tree, ast.Module)
    return tree

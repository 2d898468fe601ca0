"""Variable expansion in configuration values, as the tools that write these files do it.

The forms: ``${NAME}``, ``${NAME:-default}``, ``${env:NAME}``, ``${userHome}``,
``${workspaceFolder}`` (and ``${workspaceFolderBasename}``,
``${pathSeparator}``, ``${/}``), and ``${input:id}``. One pass: a default
or a value is inserted as it is and never expanded again. A bare ``$NAME``
or ``%NAME%`` is not a reference, and a ``${...}`` that is none of the
forms stays as it is.

Pure: the environment is a mapping handed in, never read here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

__all__ = ["Expander", "OnMissing", "ResolveInput", "Unresolved"]

OnMissing: TypeAlias = Literal["error", "keep", "empty"]
"""What an unset ``${NAME}`` without a default becomes: an error for its server, itself, or nothing."""

ResolveInput: TypeAlias = Callable[[str, Mapping[str, Any]], "str | None"]
"""Answers ``${input:ID}``: called with the id and its ``inputs`` entry (empty if none); `None` declines."""

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VARIABLE = re.compile(rf"(?:env:)?({_NAME})\Z")
_DEFAULTED = re.compile(rf"({_NAME}):-(.*)\Z", re.DOTALL)
_INPUT = re.compile(r"input:(.+)\Z", re.DOTALL)


class Unresolved(Exception):
    """A reference that could not be expanded; the message names it, never a value."""


class Expander:
    """Expands the references in one file's values.

    Args:
        environ: The environment variables (``os.environ`` or a copy).
        variables: The caller's variables, looked up before ``environ``.
        user_home: What ``${userHome}`` means.
        workspace: What ``${workspaceFolder}`` means; `None` makes it an
            unresolved reference.
        resolve_input: Answers ``${input:id}``; without it such a reference
            is unresolved.
        inputs: The file's ``inputs`` entries, by id.
        on_missing: What an unset variable without a default becomes.
        fold_case: Match names case-insensitively (Windows does).
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        variables: Mapping[str, str] | None = None,
        user_home: str | None = None,
        workspace: str | None = None,
        resolve_input: ResolveInput | None = None,
        inputs: Mapping[str, Mapping[str, Any]] | None = None,
        on_missing: OnMissing = "error",
        fold_case: bool = os.name == "nt",
    ) -> None:
        self._layers: list[Mapping[str, str]] = [dict(variables or {}), environ]
        self._fold_case = fold_case
        if fold_case:
            self._layers = [{key.upper(): value for key, value in layer.items()} for layer in self._layers]
        self.user_home = user_home
        self.workspace = workspace
        self.resolve_input = resolve_input
        self.inputs = dict(inputs or {})
        self.on_missing: OnMissing = on_missing
        self._answers: dict[str, str] = {}
        self.kept: list[str] = []
        """References left as they were under ``on_missing="keep"`` (names only)."""

    def lookup(self, name: str) -> str | None:
        """The value of a variable, the caller's variables first, or `None`."""
        key = name.upper() if self._fold_case else name
        for layer in self._layers:
            value = layer.get(key)
            if value is not None:
                return value
        return None

    def expand(self, text: str) -> str:
        """``text`` with its references replaced.

        Raises:
            Unresolved: A reference has no value (``on_missing="error"``, an
                ``${input:...}`` nobody answers, a ``${workspaceFolder}``
                without a workspace).
        """
        if "${" not in text:
            return text
        return _REFERENCE.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        body = match.group(1)
        if body == "userHome":
            if self.user_home is None:
                raise Unresolved("${userHome}: no home directory is known")
            return self.user_home
        if body in ("workspaceFolder", "workspaceFolderBasename"):
            if self.workspace is None:
                raise Unresolved(f"${{{body}}}: no workspace folder was given")
            if body == "workspaceFolder":
                return self.workspace
            return os.path.basename(os.path.normpath(self.workspace))
        if body in ("pathSeparator", "/"):
            return os.sep
        plain = _VARIABLE.match(body)
        if plain is not None:
            value = self.lookup(plain.group(1))
            if value is not None:
                return value
            return self._missing(match.group(0), plain.group(1))
        defaulted = _DEFAULTED.match(body)
        if defaulted is not None:
            # POSIX: the default also replaces an empty value.
            return self.lookup(defaulted.group(1)) or defaulted.group(2)
        wanted = _INPUT.match(body)
        if wanted is not None:
            return self._input(wanted.group(1))
        return match.group(0)

    def _missing(self, reference: str, name: str) -> str:
        if self.on_missing == "keep":
            if name not in self.kept:
                self.kept.append(name)
            return reference
        if self.on_missing == "empty":
            return ""
        raise Unresolved(f"{reference}: the variable {name} is not set (give it a default: ${{{name}:-...}})")

    def _input(self, input_id: str) -> str:
        answer = self._answers.get(input_id)
        if answer is not None:
            return answer
        if self.resolve_input is None:
            raise Unresolved(
                f"${{input:{input_id}}}: nothing gives this input's value (VS Code prompts for it;"
                " pass resolve_input)"
            )
        answer = self.resolve_input(input_id, self.inputs.get(input_id, {}))
        if answer is None:
            raise Unresolved(f"${{input:{input_id}}}: no value was given")
        if not isinstance(answer, str):
            raise TypeError(f"resolve_input returned {type(answer).__name__} for {input_id!r}, not a str")
        self._answers[input_id] = answer
        return answer

"""Checking a tool's structured output against its ``outputSchema`` (``validate_output``).

`OutputChecks` is the one place that decides whether a result is checked
(`OutputChecks.wants`) and checks it (`OutputChecks.check`), for every way a
tool result arrives: `Client.call_tool`, and a task's result. The schemas
come from the tool listings (`trio_mcp._core.outputs.OutputSchemas`); the
judgement is pure, this module only reports it (once per listing for each
tool and kind of problem) or raises it (``"strict"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from .._core.outputs import OutputSchemas, validator_available
from .._errors import MCPError, OutputValidationError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._models import CallToolResult

__all__ = ["OutputChecks"]


class OutputChecks:
    """The output checks of one client.

    Args:
        mode: The ``validate_output`` option: ``"off"``, ``"warn"`` or ``"strict"``.
        server: Who the server is, as messages name it.
        list_tools: Lists the tools (``"strict"`` lists them once when no
            listing is known, to learn the schemas).
        log: Reports a diagnostic.
    """

    def __init__(
        self,
        mode: str,
        *,
        server: str,
        list_tools: Callable[[], Awaitable[object]],
        log: Callable[[str], None],
    ) -> None:
        self.schemas = OutputSchemas()
        """The output schemas of the latest tool listing (the listings feed it)."""
        self.active = False
        """Whether results of this connection are checked at all (`settle`)."""
        self._strict = mode == "strict"
        self._mode = mode
        self._server = server
        self._list_tools = list_tools
        self._log = log
        self._reports: set[tuple[str, str]] = set()
        self._reports_generation = 0
        self._listing_tried = -1
        self._told_no_validator = False
        self._listing_lock = trio.Lock()

    def settle(self, version: str) -> None:
        """Take the negotiated protocol version: ``outputSchema`` and ``structuredContent`` came with 2025-06-18."""
        self.active = self._mode != "off" and version >= "2025-06-18"

    def wants(self, result: CallToolResult) -> bool:
        """Whether ``result`` is to be checked (no I/O): a checking connection, a result that is not an
        error, and a listing known (or ``"strict"``, which lists the tools first; with no listing
        nothing else has a schema to check against)."""
        return self.active and not result.is_error and (self.schemas.known or self._strict)

    async def check(self, name: str, result: CallToolResult) -> None:
        """Check ``result`` of tool ``name`` against its output schema, when `wants` says so.

        Raises:
            OutputValidationError: ``"strict"``, and the output breaks the
                schema (or cannot be checked).
        """
        if not self.wants(result):
            await trio.lowlevel.checkpoint()
            return
        schemas = self.schemas
        if self._strict and not schemas.known:
            await self._learn_tools()
        if schemas.declares(name) and not validator_available():
            if self._strict:
                raise OutputValidationError(
                    f"cannot check the output of tool {name!r}: validate_output='strict' needs the"
                    " validation extra (pip install 'trio-mcp[validation]')",
                    tool=name,
                    result=result,
                )
            if not self._told_no_validator:
                self._told_no_validator = True
                self._log(
                    "structured tool output is not checked: the validation extra is not installed"
                    " (pip install 'trio-mcp[validation]', or validate_output='off' to silence this)"
                )
            return
        structured = result.structured_content
        kind, path, reason = schemas.judge(name, structured, present=structured is not None)
        if kind == "ok":
            return
        server = self._server
        if kind == "unlisted":
            self._report_once(
                name,
                kind,
                f"tool {name!r} of {server} is not in its tool listing: its structured output is not checked",
            )
            return
        if kind == "unusable":
            self._report_once(
                name,
                kind,
                f"the outputSchema of tool {name!r} of {server} cannot be used, so its output is not"
                f" checked: {reason}",
            )
            return
        if kind == "missing":
            message = (
                f"tool {name!r} of {server} declared an outputSchema but its result has no structuredContent"
            )
        else:
            message = f"the structured output of tool {name!r} of {server} does not match its outputSchema at {path}: {reason}"
        if self._strict:
            raise OutputValidationError(message, tool=name, path=path, reason=reason, result=result)
        self._log(message)

    def _report_once(self, tool: str, kind: str, message: str) -> None:
        """Report through ``on_log``, once per listing for each tool and kind of problem."""
        generation = self.schemas.generation
        if self._reports_generation != generation:
            self._reports_generation = generation
            self._reports.clear()
        key = (tool, kind)
        if key not in self._reports:
            self._reports.add(key)
            self._log(message)

    async def _learn_tools(self) -> None:
        """List the tools once, to learn their output schemas (strict mode, nothing listed yet)."""
        async with self._listing_lock:
            schemas = self.schemas
            if schemas.known or self._listing_tried == schemas.generation:
                return
            try:
                await self._list_tools()
            except MCPError as exc:
                # Not again until the tools change: each call would pay for it.
                self._listing_tried = schemas.generation
                self._report_once(
                    "",
                    "listing",
                    f"cannot list the tools of {self._server} to learn their output schemas: {exc}",
                )

"""The models of MCP tasks: a task's status (`Task`), and a reference to come back to one (`TaskRef`).

Both eras' wire forms (the 2025-11-25 ``Task`` object and the flat task of
the ``io.modelcontextprotocol/tasks`` extension) are read into the one `Task`
by the pure core (`trio_mcp._core.tasks`); this module knows nothing of the
wire.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

__all__ = ["TERMINAL_STATUSES", "Task", "TaskRef"]

#: The statuses a task never leaves.
TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})


@attrs.frozen(kw_only=True)
class Task:
    """One snapshot of a task's status, as the server last reported it.

    The same in both eras: the 2025-11-25 ``Task`` (``ttl``, ``pollInterval``)
    and the 2026-07-28 extension's task (``ttlMs``, ``pollIntervalMs``) are
    both read into it.
    """

    task_id: str
    """The server's identifier of the task (wire ``taskId``)."""
    status: str
    """``"working"``, ``"input_required"``, ``"completed"``, ``"failed"`` or ``"cancelled"``
    (a status this version does not know is kept as it came)."""
    status_message: str | None = None
    """A message for people about the current status (wire ``statusMessage``)."""
    created_at: str | None = None
    """When the task was created, an ISO 8601 timestamp (wire ``createdAt``)."""
    last_updated_at: str | None = None
    """When the server last updated the task (wire ``lastUpdatedAt``); not a sign of change."""
    ttl_ms: int | None = None
    """How long, in milliseconds from creation, the server keeps the task, or `None` for unlimited."""
    poll_interval_ms: int | None = None
    """How often the server suggests polling, in milliseconds, or `None`."""
    extra: dict[str, Any] = attrs.field(factory=dict)
    """Wire keys this model does not know."""

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled), so that its status never changes again."""
        return self.status in TERMINAL_STATUSES


@attrs.frozen(kw_only=True)
class TaskRef:
    """What it takes to come back to a task later, perhaps from another process.

    `ToolTask.detach` gives one; `Client.resume_task` takes it, on a new
    connection to the same server. `to_json` and `from_json` turn it into a
    JSON object and back, for storing it.
    """

    task_id: str
    """The server's identifier of the task."""
    tool: str
    """The tool the task runs."""
    era: Literal["modern", "legacy"]
    """The protocol era of the connection that started it."""
    protocol_version: str
    """The protocol revision of that connection, e.g. ``"2025-11-25"``."""
    server: str = ""
    """Which server it runs on, as the connection named it (for people; not checked)."""

    def to_json(self) -> dict[str, Any]:
        """The reference as a JSON object (``{"taskId": ..., "tool": ..., ...}``)."""
        return {
            "taskId": self.task_id,
            "tool": self.tool,
            "era": self.era,
            "protocolVersion": self.protocol_version,
            "server": self.server,
        }

    @classmethod
    def from_json(cls, data: object) -> TaskRef:
        """Read a reference written by `to_json`.

        Raises:
            ValueError: ``data`` is not such an object.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a task reference is a JSON object, not {type(data).__name__}")
        fields = {"taskId": "task_id", "tool": "tool", "protocolVersion": "protocol_version"}
        values: dict[str, str] = {}
        for key, name in fields.items():
            value = data.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"a task reference needs {key!r} as a non-empty string, not {value!r}")
            values[name] = value
        era = data.get("era")
        if era not in ("modern", "legacy"):
            raise ValueError(f"a task reference's 'era' is 'modern' or 'legacy', not {era!r}")
        server = data.get("server", "")
        if not isinstance(server, str):
            raise ValueError(f"a task reference's 'server' is a string, not {server!r}")
        return cls(
            task_id=values["task_id"],
            tool=values["tool"],
            era=era,
            protocol_version=values["protocol_version"],
            server=server,
        )

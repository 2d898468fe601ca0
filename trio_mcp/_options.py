"""Every option of the package, defined once, with its type, default, check and documentation.

An option is a field of one frozen attrs class, and nowhere else:

* `ConnectionOptions`: the JSON-RPC session over any transport (budgets,
  buffers, the diagnostics callback); the base of the two classes below.
* `ClientOptions`: the MCP client on top (era negotiation, hooks, caching),
  which `open_client` and `connect_client` take.
* `SessionOptions`: a session used without a client, which `open_session`
  and `connect_session` take.

Where a server is, and how its process is started and stopped, is not an
option but the target's own parameters (`trio_mcp._targets`). A bad value is
refused as the class is built, before anything starts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from ._core.eras import LEGACY_VERSIONS, LOG_LEVELS, MODERN_VERSIONS, LogLevel, ProtocolChoice
from ._core.extensions import Extension, ExtensionSet
from ._core.outputs import MODES as OUTPUT_MODES
from ._public import publish
from ._version import __version__

if TYPE_CHECKING:
    # The models come with the client, not with the options: `Implementation`
    # is only named in an annotation, which attrs never evaluates here.
    from ._models import (
        CreateMessageParams,
        CreateMessageResult,
        ElicitFormParams,
        ElicitResult,
        ElicitUrlParams,
        Implementation,  # noqa: TC004
        Root,
    )

__all__ = [
    "ClientOptions",
    "ConnectionOptions",
    "ElicitationHook",
    "LogLevel",
    "NotificationCallback",
    "OutputCheck",
    "ProtocolChoice",
    "RequestHandler",
    "RootsHook",
    "SamplingHook",
    "SessionOptions",
    "at_least",
    "callable_or_none",
    "command_line",
    "environment",
    "path_or_none",
    "seconds",
]

JSON: TypeAlias = Any

NotificationCallback: TypeAlias = Callable[[dict[str, JSON]], "Awaitable[None] | None"]
"""A notification callback: called with the whole message (a dict); may be sync or async."""

RequestHandler: TypeAlias = Callable[
    [str, JSON], "Awaitable[dict[str, JSON] | None] | dict[str, JSON] | None"
]
"""A handler of server requests: ``(method, params) -> result``; may be sync or async."""

ElicitationHook: TypeAlias = Callable[
    ["ElicitFormParams | ElicitUrlParams"],
    "Awaitable[ElicitResult | Mapping[str, JSON]] | ElicitResult | Mapping[str, JSON]",
]
"""Answers an elicitation request (form or URL mode); may be sync or async."""

SamplingHook: TypeAlias = Callable[
    ["CreateMessageParams"],
    "Awaitable[CreateMessageResult | Mapping[str, JSON]] | CreateMessageResult | Mapping[str, JSON]",
]
"""Answers a sampling request with a model's reply; may be sync or async."""

RootsHook: TypeAlias = Callable[
    [],
    (
        "Awaitable[Sequence[Root | Mapping[str, JSON]] | Mapping[str, JSON]]"
        " | Sequence[Root | Mapping[str, JSON]] | Mapping[str, JSON]"
    ),
]
"""Returns the client's roots; may be sync or async."""

OutputCheck: TypeAlias = Literal["warn", "strict", "off"]
"""What `ClientOptions.validate_output` takes."""

#: Every protocol version a client may be pinned to, newest first.
PROTOCOLS: Final = ("auto", *MODERN_VERSIONS, *LEGACY_VERSIONS)


# ------------------------------------------------------------- validators


def seconds(name: str, *, zero: bool = False, none: bool = False) -> Callable[[Any, Any, Any], None]:
    """A validator: a finite number of seconds (> 0, or >= 0 with ``zero``; `None` allowed with ``none``)."""
    rule = (">= 0" if zero else "> 0") + (" or None" if none else "")

    def check(_: Any, __: Any, value: Any) -> None:
        if value is None and none:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{name} must be a number of seconds {rule}, not {value!r}")
        if math.isnan(value) or value == math.inf or value < 0 or (value == 0 and not zero):
            raise ValueError(f"{name} must be a finite number of seconds {rule}, not {value!r}")

    return check


def at_least(name: str, floor: int) -> Callable[[Any, Any, Any], None]:
    """A validator: an integer >= ``floor``."""

    def check(_: Any, __: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer >= {floor}, not {value!r}")
        if value < floor:
            raise ValueError(f"{name} must be >= {floor}, not {value!r}")

    return check


def callable_or_none(name: str) -> Callable[[Any, Any, Any], None]:
    """A validator: a callable, or `None`."""

    def check(_: Any, __: Any, value: Any) -> None:
        if value is not None and not callable(value):
            raise TypeError(f"{name} must be callable or None, not {type(value).__name__}")

    return check


def command_line(command: str | os.PathLike[str], args: object) -> tuple[str, tuple[str, ...]]:
    """Check a server's command and arguments; return them as strings.

    Raises:
        TypeError: ``args`` is a single string, or an item is not a string.
    """
    if not isinstance(command, str | os.PathLike):
        raise TypeError(f"the command must be a string or a path, not {command!r}")
    program = os.fspath(command)
    if not isinstance(program, str):
        raise TypeError(f"the command must be a string or a path, not {command!r}")
    value = args
    if isinstance(value, str | bytes):
        raise TypeError("args must be a sequence of strings, not a single string")
    if not isinstance(value, Sequence):
        raise TypeError(f"args must be a sequence of strings, not {type(value).__name__}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"the command, args and env must be strings, not {item!r}")
    return program, items


def environment(value: Mapping[str, str] | None) -> dict[str, str] | None:
    """Check an ``env`` mapping (strings to strings); return a copy."""
    given: object = value
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise TypeError(f"env must be a mapping of strings to strings, not {type(given).__name__}")
    env: dict[object, object] = dict(given)
    for key, item in env.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(f"the command, args and env must be strings, not {key!r}: {item!r}")
    return {str(key): str(item) for key, item in env.items()}


def path_or_none(value: str | os.PathLike[str] | None) -> str | None:
    """Check a ``cwd``; return it as a string."""
    given: object = value
    if given is None:
        return None
    if not isinstance(given, str | os.PathLike):
        raise TypeError(f"cwd must be a path or None, not {type(given).__name__}")
    path = os.fspath(given)
    if not isinstance(path, str):
        raise TypeError("cwd must be a str path")
    return path


# ------------------------------------------------------------ connection


@attrs.frozen(kw_only=True)
class ConnectionOptions:
    """Options of the JSON-RPC session, over whatever transport carries it."""

    on_log: Callable[[str], object] | None = attrs.field(default=None, validator=callable_or_none("on_log"))
    """Called with the session's own diagnostics (dropped lines, late answers,
    refused requests, a dead server), each naming the server. Repeated
    diagnostics are rate-limited: after a burst, one line says how many were
    suppressed. Default: the ``trio_mcp.transport`` logger at INFO."""
    request_timeout: float | None = attrs.field(default=None, validator=seconds("request_timeout", none=True))
    """A budget, in seconds, that every request of this connection gets; `None`
    (the default) for none. Off by default: bound a call with
    `trio.fail_after` or `trio.move_on_after` around it, the Trio way. A
    request over budget raises `RequestTimeout` and is withdrawn from the
    server."""
    max_message_bytes: int = attrs.field(default=64 * 1024 * 1024, validator=at_least("max_message_bytes", 1))
    """The longest message accepted from the server, in bytes; a longer one is
    discarded as it streams in, and fails the request it answered with
    `MessageTooLarge` when its id can be recovered."""
    notification_buffer: int = attrs.field(default=256, validator=at_least("notification_buffer", 0))
    """How many notifications a `Session.notifications` stream holds for a
    slow consumer before newer ones are dropped (and counted)."""
    on_wire: Callable[[str, bytes], object] | None = attrs.field(
        default=None, validator=callable_or_none("on_wire")
    )
    """Called with every message the session sends, as ``("out", line)``, and
    every message it reads, as ``("in", line)``: the raw bytes, for
    debugging and tracing (lines too long to keep are not shown). It runs
    inline with the traffic: keep it quick."""
    telemetry: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    """Whether the connection reports to OpenTelemetry: a span for every
    request and notification, the trace context in each request's
    ``_meta``, and the ``mcp.client.*`` duration metrics, through the global
    tracer and meter providers. It takes effect when the ``otel`` extra is
    installed and the application has set an SDK's provider before the
    connection opens; otherwise it costs nothing. `False` turns it off for
    this connection. See :doc:`observability`."""


@attrs.frozen(kw_only=True)
class SessionOptions(ConnectionOptions):
    """The options of a session used without a client (`open_session`, `connect_session`).

    Every option of the connection (`ClientOptions` has them too), and where
    the session sends what no request of yours claims.
    """

    on_notification: NotificationCallback | None = attrs.field(
        default=None, validator=callable_or_none("on_notification")
    )
    """The connection-wide sink, called in a task of its own with every
    notification that no request claims, one at a time. May be sync or
    async."""
    on_request: RequestHandler | None = attrs.field(default=None, validator=callable_or_none("on_request"))
    """``(method, params) -> result``, answering requests the server sends
    (initialize era). Raise `RpcError` to answer with an error; return `None`
    to send no answer at all. Without it such requests are answered with
    ``-32601``. ``ping`` is always answered. May be sync or async."""


# ----------------------------------------------------------------- client


def _protocol(_: Any, __: Any, value: Any) -> None:
    if value not in PROTOCOLS:
        raise ValueError(f"protocol must be 'auto' or one of {list(PROTOCOLS[1:])}, not {value!r}")


def _log_level(_: Any, __: Any, value: Any) -> None:
    if value is not None and value not in LOG_LEVELS:
        raise ValueError(f"log_level must be None or one of {list(LOG_LEVELS)}, not {value!r}")


def _client_info(_: Any, __: Any, value: Any) -> None:
    if isinstance(value, tuple):
        if len(value) != 2 or not all(isinstance(item, str) for item in value):
            raise TypeError("client_info must be (name, version), two strings, or an Implementation")
        return
    from ._models import Implementation

    if not isinstance(value, Implementation):
        raise TypeError(
            f"client_info must be (name, version) or an Implementation, not {type(value).__name__}"
        )


def _extensions(value: Sequence[Extension] | None) -> tuple[Extension, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping | str | Extension):
        raise TypeError(
            "extensions must be a sequence of Extension items (raw declarations go in capabilities)"
        )
    items = tuple(value)
    for item in items:
        if not isinstance(item, Extension):
            raise TypeError(f"extensions holds Extension items, not {type(item).__name__}")
    return items


def _validate_output(_: Any, __: Any, value: Any) -> None:
    if value not in OUTPUT_MODES:
        raise ValueError(f"validate_output must be one of {list(OUTPUT_MODES)}, not {value!r}")


def _capabilities(value: Mapping[str, JSON] | None) -> dict[str, JSON] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError("capabilities must be a mapping (a ClientCapabilities object)")
    return dict(value)


@attrs.frozen(kw_only=True)
class ClientOptions(ConnectionOptions):
    """The options of a client: how it negotiates, answers the server's questions, and caches.

    Give one to `open_client` or `connect_client`::

        options = trio_mcp.ClientOptions(on_sampling=my_model, request_timeout=30)
        async with trio_mcp.open_client(target, options=options) as client:
            ...

    The first six options are the connection's (a `SessionOptions` has them
    too); the others are the client's.
    """

    protocol: ProtocolChoice = attrs.field(default="auto", validator=_protocol)
    """``"auto"`` (probe with ``server/discover``, fall back to
    ``initialize``), ``"2026-07-28"``, or an initialize-era revision such as
    ``"2025-11-25"`` (offered in ``initialize``; the server may choose another
    initialize-era revision)."""
    probe_timeout: float = attrs.field(default=10.0, validator=seconds("probe_timeout"))
    """How long ``auto`` waits for the probe's answer before it takes the
    server for an initialize-era one."""
    handshake_timeout: float | None = attrs.field(
        default=20.0, validator=seconds("handshake_timeout", none=True)
    )
    """The budget of the whole handshake the library runs itself (the
    ``auto`` probe included, then ``initialize``; or a pinned
    ``server/discover``), from the moment the server is started; `None` for
    none. Exceeded, it raises `RequestTimeout`, whose text says what the
    server wrote on stdout instead of answering (how many lines that are no
    JSON-RPC message, and the first: a banner, a log line). Twenty seconds,
    as the MCP Inspector's fifteen: a server that answers nothing by then
    will not; raise it for one that is slow to start."""
    client_info: tuple[str, str] | Implementation = attrs.field(
        default=("trio-mcp", __version__), validator=_client_info
    )
    """``(name, version)`` or an `Implementation`, sent to the server."""
    on_elicitation: ElicitationHook | None = attrs.field(
        default=None, validator=callable_or_none("on_elicitation")
    )
    """Answers elicitation requests (form or URL mode), sync or async, as
    ``(params) -> ElicitResult | dict``. Giving it declares the
    ``elicitation`` capability."""
    on_sampling: SamplingHook | None = attrs.field(default=None, validator=callable_or_none("on_sampling"))
    """Answers sampling requests with your model's reply, sync or async, as
    ``(params) -> CreateMessageResult | dict``; declares ``sampling``.
    Sampling is deprecated in the 2026-07-28 revision, and still answered."""
    sampling_tools: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """Whether ``on_sampling`` takes requests that offer the model tools
    (``params.tools`` and ``params.tool_choice``) and may answer with
    `ToolUseContent`; declares ``sampling.tools`` (revision 2025-11-25 and
    later). Without it such requests are refused. Needs ``on_sampling``."""
    on_roots: RootsHook | None = attrs.field(default=None, validator=callable_or_none("on_roots"))
    """Returns your roots, sync or async, as ``() -> list[Root] | dict``;
    declares ``roots``. Roots are deprecated in the 2026-07-28 revision, and
    still answered."""
    on_notification: NotificationCallback | None = attrs.field(
        default=None, validator=callable_or_none("on_notification")
    )
    """Called with every notification that names no call of yours (log
    messages, list changes, resource updates, unknown methods), after the
    cache has seen it; without it, log messages go to the ``trio_mcp.server``
    logger at DEBUG. May be sync or async. See :doc:`notifications`."""
    log_level: LogLevel | None = attrs.field(default=None, validator=_log_level)
    """The least severe log level wanted (``"debug"``, ``"info"``, ...).
    2026-07-28 era: the ``logLevel`` every request asks for; initialize era:
    sent once with ``logging/setLevel`` when the server has the ``logging``
    capability. `None`: no logs are asked for. The 2026-07-28 revision
    deprecates the protocol's logging and names OpenTelemetry for observing
    servers (:doc:`observability`)."""
    max_rounds: int = attrs.field(default=10, validator=at_least("max_rounds", 1))
    """The most requests one multi round-trip operation may take."""
    input_timeout: float | None = attrs.field(default=None, validator=seconds("input_timeout", none=True))
    """A budget for one whole multi round-trip operation, hooks included;
    `None` (the default) for none: bound the call with a cancel scope instead.
    Exceeded, it raises `RequestTimeout`."""
    cache: bool = True
    """Keep list, read and discover results while their ``ttlMs`` says they
    are fresh; list-change notifications invalidate them."""
    capabilities: dict[str, JSON] | None = attrs.field(default=None, converter=_capabilities)
    """``ClientCapabilities`` to declare on top of those the hooks imply, for
    example ``{"elicitation": {"form": {}}}`` to answer input requests
    yourself in manual mode. Its ``extensions`` object is declared as typed
    extensions are (in ``initialize``, and on every 2026-07-28 request); give
    `extensions` for an extension that claims results or observes
    notifications."""
    extensions: tuple[Extension, ...] = attrs.field(default=(), converter=_extensions)
    """Typed client extensions (`trio_mcp.extensions.Extension`), such as MCP
    Apps (`trio_mcp.extensions.apps.apps_extension`): each is declared
    under ``capabilities.extensions`` in ``initialize`` and on every
    2026-07-28 request that needs it (listings included), and may claim
    result types, observe notifications and answer server requests. See
    :doc:`extensions`."""
    validate_output: OutputCheck = attrs.field(default="warn", validator=_validate_output)
    """How `Client.call_tool` checks a result's ``structuredContent``
    against the ``outputSchema`` of the tool, as listed by the server:

    * ``"warn"`` (the default): a mismatch is reported through ``on_log``
      and the result returned as it came. A result that breaks its schema
      still carries the tool's content, and is often still usable; the
      report names the tool and the place.
    * ``"strict"``: a mismatch raises `OutputValidationError`. A call to a
      tool that was never listed lists the tools once to learn its schema.
    * ``"off"``: no check.

    Results with ``isError`` set are never checked. Each schema is compiled
    once per listing; a schema that cannot be used (invalid, too large, a
    remote ``$ref``) is reported once and its results pass unchecked. The
    check needs jsonschema-rs, a dependency of the package; without it (an
    install with ``--no-deps``) ``"warn"`` checks nothing and says
    so once, the first time a call would have been checked, and ``"strict"``
    raises `OutputValidationError` on such calls. See
    :ref:`structured-output`."""

    def __attrs_post_init__(self) -> None:
        if self.sampling_tools and self.on_sampling is None:
            raise ValueError("sampling_tools=True needs an on_sampling hook")
        raw = self.capabilities.get("extensions") if self.capabilities else None
        if raw is not None and not isinstance(raw, Mapping):
            raise TypeError("capabilities['extensions'] must be a mapping of identifiers to settings")
        # Clashes between extensions are refused here, before anything starts.
        ExtensionSet(self.extensions, raw)


publish(globals())

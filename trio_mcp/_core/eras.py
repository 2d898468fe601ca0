"""What each protocol era says a client sends and accepts, without I/O.

The constants of both eras (versions, ``_meta`` keys, error codes, log
levels) and the pure rules built on them:

* `capabilities` and `modern_meta` build what a request declares;
* `result_type` reads a 2026-07-28 result's ``resultType``;
* `retry_params` builds the next round of a multi round-trip request;
* `input_problem` says why an input request cannot be answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from .._errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Hooks",
    "LogLevel",
    "ProtocolChoice",
    "capabilities",
    "input_problem",
    "modern_meta",
    "result_type",
    "retry_params",
    "sampling_answer_problem",
]

JSON: TypeAlias = Any
Era: TypeAlias = Literal["modern", "legacy"]

#: The stateless revisions this client speaks, newest first.
MODERN_VERSIONS: Final = ("2026-07-28",)
#: The initialize-era revisions this client speaks, newest first.
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

#: The logging levels, least severe first.
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The same choices for type checkers (a test holds them equal to the tuples).
ProtocolChoice: TypeAlias = Literal[
    "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
]
"""``"auto"`` (probe, then fall back), or a protocol version to pin: what ``ClientOptions.protocol`` takes."""
LogLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""A log level of the protocol (the syslog severities of RFC 5424), least severe first."""

UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
MISSING_CLIENT_CAPABILITY: Final = -32021
HEADER_MISMATCH: Final = -32020

#: Methods whose modern results may be ``input_required``.
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The input request methods, and the hook that answers each.
INPUT_HOOKS: Final = {
    "elicitation/create": "on_elicitation",
    "sampling/createMessage": "on_sampling",
    "roots/list": "on_roots",
}


# ------------------------------------------------------------ what we send


@attrs.frozen
class Hooks:
    """Which input hooks the client was given."""

    elicitation: bool = False
    sampling: bool = False
    roots: bool = False
    sampling_tools: bool = False
    """The sampling hook takes requests that offer the model tools."""


#: The first revision with tools in sampling (``sampling.tools``, ``tool_use`` blocks).
SAMPLING_TOOLS_SINCE: Final = "2025-11-25"


def capabilities(hooks: Hooks, version: str, *, for_input: bool = True) -> dict[str, JSON]:
    """The ``ClientCapabilities`` object to declare at ``version``.

    Args:
        hooks: Which hooks exist (giving a hook declares its capability).
        version: The negotiated (or offered) protocol version.
        for_input: In the modern era, whether this request may be answered
            with input requests (``tools/call``, ``prompts/get``,
            ``resources/read``); other requests declare nothing.
    """
    caps: dict[str, JSON] = {}
    modern = version in MODERN_VERSIONS
    if modern and not for_input:
        return caps
    if hooks.roots:
        caps["roots"] = {} if modern else {"listChanged": False}
    if hooks.sampling:
        caps["sampling"] = {"tools": {}} if hooks.sampling_tools and version >= SAMPLING_TOOLS_SINCE else {}
    if hooks.elicitation and version >= "2025-06-18":
        caps["elicitation"] = {} if version == "2025-06-18" else {"form": {}, "url": {}}
    return caps


def modern_meta(
    version: str,
    caps: dict[str, JSON],
    client_info: dict[str, JSON],
    *,
    log_level: str | None = None,
    progress_token: int | str | None = None,
    extra: Mapping[str, JSON] | None = None,
) -> dict[str, JSON]:
    """The ``_meta`` object every 2026-07-28 request carries."""
    meta: dict[str, JSON] = dict(extra) if extra else {}
    meta[PROTOCOL_VERSION] = version
    meta[CLIENT_CAPABILITIES] = caps
    meta[CLIENT_INFO] = client_info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    if progress_token is not None:
        meta["progressToken"] = progress_token
    return meta


def result_type(
    method: str, result: dict[str, JSON], *, tasks: bool = False
) -> Literal["complete", "input_required", "task"]:
    """Read the ``resultType`` of a 2026-07-28 result.

    A missing ``resultType`` means complete. ``"task"`` is accepted only
    when ``tasks`` says the request declared the tasks extension, and only
    for ``tools/call``.

    Raises:
        ProtocolError: The value is unknown, or ``input_required`` on a
            method that may not ask for input.
    """
    kind = result.get("resultType", "complete")
    if kind == "complete":
        return "complete"
    if kind == "input_required":
        if method not in MRTR_METHODS:
            raise ProtocolError(
                f"the server answered {method} with input_required, which only {sorted(MRTR_METHODS)} allow"
            )
        return "input_required"
    if kind == "task" and tasks and method == "tools/call":
        return "task"
    raise ProtocolError(f"the server answered {method} with an unknown resultType {kind!r}")


def retry_params(
    params: dict[str, JSON],
    input_responses: dict[str, JSON] | None,
    request_state: str | None,
) -> dict[str, JSON]:
    """The params of the next round: the original ones plus this round's answers.

    ``requestState`` is passed back unchanged, and only when the server sent
    one; answers from earlier rounds are never carried over.
    """
    out = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if input_responses:
        out["inputResponses"] = input_responses
    if request_state is not None:
        out["requestState"] = request_state
    return out


def input_problem(method: object, params: object, hooks: Hooks, version: str) -> str | None:
    """Why an input request cannot be answered, or `None` when a hook can take it.

    Returns the reason as a sentence naming the missing hook.
    """
    if not isinstance(method, str) or method not in INPUT_HOOKS:
        return f"the server asked for {method!r}, which is not an input request this client knows"
    if not getattr(hooks, method.split("/")[0]):
        return f"the server asked for {method} but the client has no {INPUT_HOOKS[method]} hook"
    if method == "elicitation/create" and version < "2025-06-18":
        return f"the server asked for elicitation, which protocol version {version} does not have"
    if (
        method == "sampling/createMessage"
        and isinstance(params, dict)
        and (params.get("tools") is not None or params.get("toolChoice") is not None)
        and not (hooks.sampling_tools and version >= SAMPLING_TOOLS_SINCE)
    ):
        return "the server asked for sampling with tools, which the client did not declare (sampling.tools)"
    if method == "elicitation/create" and isinstance(params, dict):
        mode = params.get("mode", "form")
        if mode not in ("form", "url") or (mode == "url" and version < "2025-11-25"):
            return f"the server asked for elicitation in {mode!r} mode, which the client did not declare"
    return None


def sampling_answer_problem(params: JSON, answer: dict[str, JSON], version: str) -> str | None:
    """What is wrong with the tool use in a sampling hook's answer (on the wire), or `None`.

    ``tool_use`` and ``tool_result`` blocks exist from revision 2025-11-25
    on, and only in answer to a request that offered tools; a ``tool_use``
    must name an offered tool, and none may come when ``toolChoice`` says
    ``"none"``; tool results stand alone in their message.
    """
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    kinds = [block.get("type") if isinstance(block, dict) else None for block in blocks]
    if "tool_use" not in kinds and "tool_result" not in kinds:
        return None
    if version < SAMPLING_TOOLS_SINCE:
        return f"tool_use and tool_result content do not exist in protocol version {version}"
    offered = params.get("tools") if isinstance(params, dict) else None
    if not isinstance(offered, list) or not offered:
        return "the answer uses tools (tool_use or tool_result content) but the request offered none"
    if "tool_result" in kinds and any(kind != "tool_result" for kind in kinds):
        return "a message with tool_result content must contain tool results only"
    choice = params.get("toolChoice")
    if "tool_use" in kinds and isinstance(choice, dict) and choice.get("mode") == "none":
        return 'the answer uses a tool although the request\'s toolChoice is {"mode": "none"}'
    names = {tool.get("name") for tool in offered if isinstance(tool, dict)}
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") not in names:
            return f"the answer uses tool {block.get('name')!r}, which the request did not offer"
    return None

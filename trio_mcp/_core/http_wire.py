"""The Streamable HTTP wire, without I/O: headers, media types, challenges, delays.

What the HTTP transport decides from strings alone lives here, so that it
can be tested without a server:

* `modern_headers`: the per-request headers of the 2026-07-28 era
  (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``), built from the
  message itself, so that headers and body never disagree;
* `header_value`: a value as a header may carry it (the ``=?base64?...?=``
  form for anything that is not plain visible ASCII);
* `media_type`: the essence of a ``Content-Type`` (``application/json;
  charset=utf-8`` is JSON);
* `parse_challenge`: the scheme and parameters of a ``WWW-Authenticate``
  header;
* `parse_retry_after`: a ``Retry-After`` header in seconds;
* `valid_session_id`: the characters a session id may hold;
* `same_origin`: whether a redirect stays on the server's origin;
* `rpc_error_body`: the JSON-RPC error an error status carries, if any;
* `lost_session`: whether such an error says the server forgot the session;
* `redirect_target`: where a ``Location`` header points, or why it cannot be
  followed;
* `typed_refusal`: the typed error of a refusal an application may act on
  (`AuthRequired`, `ServerBusy`).
"""

from __future__ import annotations

import base64
import email.utils
import re
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import urljoin, urlsplit

from .._errors import AuthRequired, HTTPError, ServerBusy
from .codec import UnreadableJSON, decode
from .eras import PROTOCOL_VERSION

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BadLocation",
    "header_value",
    "lost_session",
    "media_type",
    "modern_headers",
    "modern_version",
    "parse_challenge",
    "parse_retry_after",
    "redirect_target",
    "rpc_error_body",
    "same_origin",
    "typed_refusal",
    "valid_session_id",
]

JSON: TypeAlias = Any

#: The longest delay a ``Retry-After`` may ask for that is taken as given, in seconds.
MAX_RETRY_AFTER: Final = 3600.0

_BASE64_PREFIX: Final = "=?base64?"
_BASE64_SUFFIX: Final = "?="
#: Methods whose ``Mcp-Name`` is the ``name`` param, and the one whose name is the ``uri``.
_NAMED_BY_NAME: Final = frozenset({"tools/call", "prompts/get"})
_NAMED_BY_URI: Final = frozenset({"resources/read"})
#: Methods of the tasks extension whose ``Mcp-Name`` is the ``taskId`` param.
_NAMED_BY_TASK: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

#: The forms in which servers say that they no longer know a session (HTTP 400):
#: everything's ``No valid session ID provided``, the Python SDKs' ``Session not
#: found``, and their kin. An error that merely mentions a session
#: (``session_name is required``) is the server's answer, not one of these.
_LOST_SESSION = re.compile(
    r"\b(no valid session|session not found|unknown session|invalid session|session (?:has )?expired"
    r"|session (?:id )?(?:is )?(?:no longer valid|terminated))",
    re.IGNORECASE,
)
#: The JSON-RPC codes such an error comes with.
_LOST_SESSION_CODES: Final = frozenset({-32000, -32001, -32600})

_TOKEN: Final = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


def modern_version(message: dict[str, JSON]) -> str | None:
    """The 2026-07-28-era version a message carries in ``params._meta``, or `None` (an initialize-era message)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    version = meta.get(PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


def header_value(value: str) -> str:
    """``value`` as a header carries it: as is when it is plain, else ``=?base64?<UTF-8, base64>?=``.

    Plain means visible ASCII, spaces and tabs only, no leading or trailing
    whitespace, and not itself of the encoded form. Anything else (non-ASCII,
    control characters, CR or LF) is encoded, so that a name can never break
    or inject a header.
    """
    plain = (
        all(char == "\t" or " " <= char <= "~" for char in value)
        and value == value.strip(" \t")
        and not (value.startswith(_BASE64_PREFIX) and value.endswith(_BASE64_SUFFIX))
    )
    if plain:
        return value
    raw = value.encode("utf-8", "surrogatepass")
    return _BASE64_PREFIX + base64.b64encode(raw).decode("ascii") + _BASE64_SUFFIX


def modern_headers(message: dict[str, JSON], version: str) -> dict[str, str]:
    """The 2026-07-28-era headers of one request: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``."""
    headers = {"mcp-protocol-version": version}
    method = message.get("method")
    if isinstance(method, str):
        headers["mcp-method"] = header_value(method)
        params = message.get("params")
        name: object = None
        if isinstance(params, dict):
            if method in _NAMED_BY_NAME:
                name = params.get("name")
            elif method in _NAMED_BY_URI:
                name = params.get("uri")
            elif method in _NAMED_BY_TASK:
                name = params.get("taskId")
        if isinstance(name, str):
            headers["mcp-name"] = header_value(name)
    return headers


def media_type(content_type: str | None) -> str:
    """The essence of a ``Content-Type``: lower case, without parameters (``""`` when absent)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """The scheme and parameters of the first challenge of a ``WWW-Authenticate`` header.

    ``Bearer resource_metadata="https://x/.well-known/...", scope="a b"``
    gives ``("Bearer", {"resource_metadata": "https://x/...", "scope": "a b"})``.
    Parameter names are lower-cased; quoted values are unquoted. Whatever
    cannot be read is left out (never raises).
    """
    match = _SCHEME.match(header)
    if match is None:
        return "", {}
    scheme = match.group(1)
    params: dict[str, str] = {}
    position = match.end()
    while position < len(header):
        param = _PARAM.match(header, position)
        if param is None or param.end() == position:
            break
        name, value = param.group(1).lower(), param.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        # A second challenge (``Bearer ..., Basic realm=...``) starts with a
        # bare token: it is not read as a parameter of the first.
        params.setdefault(name, value)
        position = param.end()
    return scheme, params


def parse_retry_after(value: str | None, now: float) -> float | None:
    """A ``Retry-After`` header in seconds from ``now`` (a POSIX time), or `None` when absent or unreadable.

    Both forms are read: delta-seconds (``120``) and an HTTP date. The
    result is at least 0 and at most `MAX_RETRY_AFTER`.
    """
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(int(value)), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return min(max(0.0, when.timestamp() - now), MAX_RETRY_AFTER)


def valid_session_id(value: str) -> bool:
    """Whether a session id holds only visible ASCII (0x21 to 0x7E), and something."""
    return bool(value) and all("!" <= char <= "~" for char in value)


def same_origin(a: str, b: str) -> bool:
    """Whether two absolute URLs share scheme, host and port (an unreadable URL shares none)."""
    defaults = {"http": 80, "https": 443}
    try:
        first, second = urlsplit(a), urlsplit(b)
        port_a = first.port or defaults.get(first.scheme.lower())
        port_b = second.port or defaults.get(second.scheme.lower())
    except ValueError:
        return False
    return (
        first.scheme.lower() == second.scheme.lower()
        and (first.hostname or "") == (second.hostname or "")
        and port_a == port_b
    )


def rpc_error_body(body: bytes) -> dict[str, JSON] | None:
    """The ``error`` object of a JSON-RPC error response in ``body``, or `None`.

    Only a well-formed error counts (an object with an integer ``code``); an
    error status with anything else in its body is not an MCP answer.
    """
    try:
        message = decode(body)
    except UnreadableJSON:
        return None
    if not isinstance(message, dict):
        return None
    error = message.get("error")
    if not isinstance(error, dict):
        return None
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    return error


def lost_session(error: dict[str, JSON]) -> bool:
    """Whether a JSON-RPC error (of an HTTP 400) says that the server no longer knows the session.

    Only the forms servers use count: a code of ``-32000``, ``-32001`` or
    ``-32600`` with a message such as ``No valid session ID provided`` or
    ``Session not found``. Any other error is the server's answer to the
    request, even one whose message mentions a session.
    """
    message = error.get("message")
    return (
        error.get("code") in _LOST_SESSION_CODES
        and isinstance(message, str)
        and _LOST_SESSION.search(message) is not None
    )


class BadLocation(ValueError):
    """A ``Location`` header that is not a usable URL."""


def redirect_target(url: str, location: str) -> str:
    """The absolute URL a ``Location`` header points to, from ``url``.

    Raises:
        BadLocation: It is not a usable http(s) URL (no host, a port out of
            range, characters no URL holds).
    """
    try:
        target = urljoin(url, location.strip())
        parts = urlsplit(target)
        port = parts.port
    except ValueError as exc:
        raise BadLocation(f"{location!r} is not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadLocation(f"{location!r} is not an http(s) URL with a host")
    if port == 0 or any(ord(char) < 0x21 or ord(char) == 0x7F for char in target):
        raise BadLocation(f"{location!r} is not a usable URL")
    return target


def typed_refusal(
    name: str, url: str, method: str, status: int, headers: Mapping[str, str], text: str, now: float
) -> HTTPError | None:
    """The error for a refusal an application may act on, or `None`.

    401, or 403 with a challenge: `AuthRequired` with what the
    ``WWW-Authenticate`` challenge says. 429 and 503: `ServerBusy` with the
    delay ``Retry-After`` asks for (``now``: the POSIX time, for dates).
    ``headers`` has lower-case names; ``text`` is the start of the body.
    """
    challenge = headers.get("www-authenticate", "")
    if status == 401 or (status == 403 and challenge):
        scheme, params = parse_challenge(challenge)
        what = f" ({params['error']})" if "error" in params else ""
        where = f"; resource metadata: {params['resource_metadata']}" if "resource_metadata" in params else ""
        return AuthRequired(
            f"{name} refused {method} with HTTP {status}{what}: authorization required{where}",
            url=url,
            status=status,
            headers=dict(headers),
            body=text,
            www_authenticate=challenge,
            scheme=scheme,
            params=params,
        )
    if status in (429, 503):
        delay = parse_retry_after(headers.get("retry-after"), now)
        after = f"; retry after {delay:g} s" if delay is not None else ""
        return ServerBusy(
            f"{name} is busy: HTTP {status} to {method}{after}",
            url=url,
            status=status,
            headers=dict(headers),
            body=text,
            retry_after=delay,
        )
    return None

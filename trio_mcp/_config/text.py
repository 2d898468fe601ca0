"""Reading the text of configuration files: JSON (strict, or with comments) and dotenv.

Pure functions on strings: nothing here opens a file.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONObject", "parse_dotenv", "parse_json", "strip_jsonc"]


class JSONObject(dict[str, Any]):
    """A decoded JSON object that remembers the keys it was given more than once.

    Python's `json` keeps the last of two equal keys silently; a configuration
    file with the same server twice is a mistake worth refusing.
    """

    duplicates: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> JSONObject:
    result = JSONObject(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        dupes: list[str] = []
        for key, _ in pairs:
            if key in seen and key not in dupes:
                dupes.append(key)
            seen.add(key)
        result.duplicates = tuple(dupes)
    return result


def duplicates(value: object) -> tuple[str, ...]:
    """The keys given twice in a decoded JSON object (none for a plain dict)."""
    return getattr(value, "duplicates", ())


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str) -> Any:
    """Decode strict JSON; objects are `JSONObject`, so duplicate keys can be found.

    Raises:
        ValueError: The text is not JSON (``NaN`` and ``Infinity`` are not
            either); the message gives the position, never the content.
    """
    try:
        return json.loads(text, object_pairs_hook=_object, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # NaN, Infinity
        raise ValueError(f"not valid JSON: {exc}") from None


# One token of JSON with comments, in one pass: a string (kept as it is,
# to its end or the text's), a line comment, a block comment (unterminated:
# the rest of the text, kept for the JSON parser to refuse), or a comma
# that only blanks and comments separate from a closing bracket. The
# comment patterns cannot span two comments, and the look past a comma
# never gives back what it matched: nothing backtracks.
_JSONC_TOKEN = re.compile(
    r"""
      (?P<string> "(?:[^"\\]|\\.)*(?:"|\\?\Z) )
    | (?P<comment> //[^\n]* | /\*[^*]*\*+(?:[^/*][^*]*\*+)*/ )
    | (?P<open> /\*.* )
    | (?P<comma> ,(?=(?>[ \t\r\n] | //[^\n]*+ | /\*[^*]*\*+(?:[^/*][^*]*\*+)*/ )*+[}\]]) )
    """,
    re.VERBOSE | re.DOTALL,
)
_BLANK = re.compile(r"[^\n]")


def _blank(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "comment":
        return _BLANK.sub(" ", match.group())
    if kind == "comma":
        return " "
    return match.group()


def strip_jsonc(text: str) -> str:
    """JSON with comments (``//``, ``/* */``) and trailing commas, as plain JSON.

    Comments become spaces, so that line and column numbers in errors stay
    right; strings are left alone. An unterminated comment is left in place,
    for the JSON parser to refuse.
    """
    return _JSONC_TOKEN.sub(_blank, text)


_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_dotenv(text: str) -> dict[str, str]:
    """The variables of a dotenv file.

    One ``KEY=VALUE`` a line, optionally after ``export``; blank lines and
    lines starting with ``#`` are skipped. A value in single quotes is taken
    as it is; in double quotes, ``\\n``, ``\\t``, ``\\r``, ``\\"``, ``\\\\``
    and ``\\$`` are escapes; unquoted, it ends at `` #`` (a comment) and its
    surrounding blanks are dropped. Nothing is expanded (``$OTHER`` stays as
    it is). A later line for the same key wins.

    Raises:
        ValueError: A line is malformed; the message gives its number,
            never its content (it may hold a secret).
    """
    result: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[len("export") :].lstrip()
        key, sep, rest = line.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"line {number}: expected KEY=VALUE")
        if not _DOTENV_KEY.match(key):
            raise ValueError(f"line {number}: not a variable name before '='")
        rest = rest.strip()
        if rest[:1] == "'":
            end = rest.find("'", 1)
            if end < 0:
                raise ValueError(f"line {number}: unterminated single quote")
            value, after = rest[1:end], rest[end + 1 :]
        elif rest[:1] == '"':
            chars: list[str] = []
            i = 1
            while i < len(rest) and rest[i] != '"':
                if rest[i] == "\\" and i + 1 < len(rest):
                    nxt = rest[i + 1]
                    chars.append(_ESCAPES.get(nxt, "\\" + nxt))
                    i += 2
                    continue
                chars.append(rest[i])
                i += 1
            if i >= len(rest):
                raise ValueError(f"line {number}: unterminated double quote")
            value, after = "".join(chars), rest[i + 1 :]
        else:
            comment = re.search(r"\s#", rest)
            value = (rest[: comment.start()] if comment else rest).strip()
            after = ""
        after = after.strip()
        if after and not after.startswith("#"):
            raise ValueError(f"line {number}: text after the closing quote")
        if "\0" in value:
            raise ValueError(f"line {number}: the value contains a NUL character")
        result[key] = value
    return result

"""A minimal, fast JSON-RPC echo server over stdio, for the benchmarks.

Every contender talks to this same server. It reads stdin in large chunks,
answers every complete line of a chunk, and writes the answers of the chunk
with one ``write``: under load the answers are batched, and a lone request is
still answered at once (nothing waits for more input).

Methods (any other method is echoed):

* ``big``: the result is ``{"data": "xxx..."}`` with ``params["size"]`` bytes
  of data; the encoded answer is cached per size, so the server costs little
  beside the copy.
* ``hold``: answers are held back until ``params["n"]`` of them are held, then
  all are written at once (to keep ``n`` requests in flight in the client).
* anything else: the result is the request's params (``{}`` without params).

Notifications (messages without an id) are read and ignored. Only the
standard library is needed; orjson is used when it is importable.
"""

from __future__ import annotations

import contextlib
import os

try:
    import orjson

    _loads = orjson.loads
    _OPTION = orjson.OPT_APPEND_NEWLINE

    def _dumps_line(obj: object) -> bytes:
        return orjson.dumps(obj, option=_OPTION)

    def _dumps(obj: object) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - the benchmarks normally have orjson
    import json

    _loads = json.loads

    def _dumps_line(obj: object) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    def _dumps(obj: object) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()


_READ_SIZE = 1 << 20


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def main() -> None:
    big_tails: dict[int, bytes] = {}
    held: list[bytes] = []
    pending = b""
    while True:
        data = os.read(0, _READ_SIZE)
        if not data:
            break
        if pending:
            data = pending + data
        lines = data.split(b"\n")
        pending = lines.pop()
        out: list[bytes] = []
        for line in lines:
            if not line.strip():
                continue
            msg = _loads(line)
            request_id = msg.get("id")
            if request_id is None:
                continue
            method = msg.get("method")
            params = msg.get("params")
            if method == "big":
                size = int(params["size"])
                tail = big_tails.get(size)
                if tail is None:
                    tail = big_tails[size] = b',"result":{"data":"' + b"x" * size + b'"}}\n'
                out.append(b'{"jsonrpc":"2.0","id":' + _dumps(request_id) + tail)
            elif method == "hold":
                held.append(_dumps_line({"jsonrpc": "2.0", "id": request_id, "result": params or {}}))
                if len(held) >= int(params["n"]):
                    out.extend(held)
                    held.clear()
            else:
                out.append(_dumps_line({"jsonrpc": "2.0", "id": request_id, "result": params or {}}))
        if out:
            _write_all(out[0] if len(out) == 1 else b"".join(out))


if __name__ == "__main__":
    # The client may go away first: then leave quietly.
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main()

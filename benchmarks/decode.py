"""How much reading lines exactly costs: `decode` and `receive_line` against plain ``orjson.loads``.

`trio_mcp._core.codec.decode` reads every line the server writes. It takes
orjson's value and pays for exactness (integers beyond 64 bits, which orjson
silently turns into floats) with a cheap look at the line. This script
measures that price on typical answers::

    python benchmarks/decode.py            # a few seconds
    python benchmarks/decode.py --quick

For each answer it prints the time of ``orjson.loads``, of `decode`, and of
`Connection.receive_line` for the same line (decoding included), each the
best of many rounds taken in turns, and the ratio of `decode` to
``orjson.loads``. The machines this runs on are noisy: compare ratios from
one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import base64
import gc
import time
from collections.abc import Callable

import orjson

from trio_mcp._core.codec import decode
from trio_mcp._core.jsonrpc import Answered, Connection


def answers() -> dict[str, bytes]:
    """Typical answers of a server, as the lines it writes."""

    def answer(result: object) -> bytes:
        return orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": result})

    tool = {
        "description": "Does a useful thing with the given arguments and returns a result. " * 2,
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A file path"},
                "count": {"type": "integer", "minimum": 0, "maximum": 1000},
                "mode": {"type": "string", "enum": ["fast", "slow", "auto"]},
            },
            "required": ["path"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": False},
    }
    text = 'Some prose, "quoted" now and then, and a number: 42.\n  - an item\n' * 1600
    png = base64.b64encode(bytes(range(256)) * 300).decode()
    return {
        "tools/call, text": answer(
            {
                "content": [{"type": "text", "text": "The weather in Paris is 18 degrees and cloudy."}],
                "isError": False,
                "structuredContent": {"temp": 18, "sky": "cloudy"},
            }
        ),
        "tools/list, 30 tools": answer(
            {"tools": [{"name": f"tool_{i}", "title": f"Tool {i}", **tool} for i in range(30)]}
        ),
        "resources/read, text": answer(
            {"contents": [{"uri": "file:///a.md", "mimeType": "text/markdown", "text": text}]}
        ),
        "tools/call, image": answer({"content": [{"type": "image", "mimeType": "image/png", "data": png}]}),
        "numbers, 500 rows": answer(
            {"rows": [[i, i * 1000003, i / 2, 1_700_000_000_000 + i] for i in range(500)]}
        ),
    }


def best_of(
    rounds: int, contenders: list[Callable[[bytes], object]], line: bytes, budget: float
) -> list[float]:
    """The best time of each contender on ``line`` (seconds per call), taking turns round after round."""
    calls = max(1, int(budget / max(_once(c, line) for c in contenders)))
    best = [float("inf")] * len(contenders)
    for _ in range(rounds):
        for i, contender in enumerate(contenders):
            start = time.perf_counter()
            for _ in range(calls):
                contender(line)
            best[i] = min(best[i], (time.perf_counter() - start) / calls)
    return best


def _once(contender: Callable[[bytes], object], line: bytes) -> float:
    start = time.perf_counter()
    contender(line)
    return max(time.perf_counter() - start, 1e-7)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    rounds, budget = (10, 0.002) if args.quick else (60, 0.005)

    conn = Connection()
    conn.start_request("x", None)
    pending = conn._pending[1]

    def receive(line: bytes) -> object:
        conn._pending[1] = pending
        events = conn.receive_line(line)
        assert isinstance(events[0], Answered)
        return events

    gc.disable()
    print(
        f"{'answer':22} {'bytes':>8} {'orjson.loads':>13} {'decode':>10} {'receive_line':>13}  decode/orjson"
    )
    for name, line in answers().items():
        assert decode(line) == orjson.loads(line)
        loads, exact, received = best_of(rounds, [orjson.loads, decode, receive], line, budget)
        print(
            f"{name:22} {len(line):8} {loads * 1e6:10.2f} us {exact * 1e6:7.2f} us"
            f" {received * 1e6:10.2f} us  {exact / loads:.2f}x"
        )


if __name__ == "__main__":
    main()

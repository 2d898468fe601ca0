"""The pure protocol core: no Trio, no I/O, no clock.

Everything a client decides without waiting lives here, so that it can be
tested and fuzzed without a process or a clock (a test checks that nothing
in this package imports Trio):

* `~trio_mcp._core.framing`: bytes to lines, bounded and linear;
* `~trio_mcp._core.sse`: bytes to server-sent events, bounded and linear;
* `~trio_mcp._core.codec`: JSON lines read exactly as Python's ``json`` reads them;
* `~trio_mcp._core.jsonrpc`: the JSON-RPC connection as a state machine (ids,
  correlation, routing, diagnostics); it never raises on what a server sends;
* `~trio_mcp._core.eras`: what each protocol era says a client sends;
* `~trio_mcp._core.negotiation`: which era a server speaks;
* `~trio_mcp._core.cache`: the ``ttlMs`` cache;
* `~trio_mcp._core.limits`: rate limits for diagnostics.
* `~trio_mcp._core.outputs`: structured tool output checked against its ``outputSchema``;
* `~trio_mcp._core.redirects`: which HTTP redirects are followed (the same origin only).
"""

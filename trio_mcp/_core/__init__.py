"""The pure protocol core: no Trio, no I/O, no clock.

Everything a client decides without waiting lives here, so that it can be
tested and fuzzed without a process or a clock. Each module is a value, a
rule or a machine: events in, decisions out; time, when it matters, is
passed in. A test checks that every module below is listed here, imports
no Trio and nothing that does I/O (only a fixed set of pure modules), and
calls no ``open``, ``print`` or ``input``.

Lines and JSON-RPC:

* `~trio_mcp._core.framing`: bytes to lines, bounded and linear;
* `~trio_mcp._core.codec`: JSON lines read exactly as Python's ``json`` reads them;
* `~trio_mcp._core.jsonrpc`: the JSON-RPC connection as a state machine (ids,
  correlation, routing, diagnostics); it never raises on what a server sends;
* `~trio_mcp._core.limits`: rate limits for diagnostics;
* `~trio_mcp._core.kinds`: what kind of JSON value a value is, in the words every message uses.

Protocol eras and what a client sends:

* `~trio_mcp._core.eras`: what each protocol era says a client sends;
* `~trio_mcp._core.negotiation`: which era a server speaks;
* `~trio_mcp._core.extensions`: client extensions as data, folded into what a client sends;
* `~trio_mcp._core.cache`: the ``ttlMs`` cache;
* `~trio_mcp._core.outputs`: structured tool output checked against its ``outputSchema``;
* `~trio_mcp._core.tasks`: a task followed in either era (status, polls, input, result).

HTTP:

* `~trio_mcp._core.sse`: bytes to server-sent events, bounded and linear;
* `~trio_mcp._core.http_wire`: headers, media types, challenges and delays, from strings alone;
* `~trio_mcp._core.http_actions`: what the HTTP machines decide, as values;
* `~trio_mcp._core.streamable_http`: Streamable HTTP, both eras, as an event machine;
* `~trio_mcp._core.http_sse`: the state of the HTTP+SSE fallback of 2024-11-05;
* `~trio_mcp._core.param_headers`: tool arguments mirrored into HTTP headers;
* `~trio_mcp._core.redirects`: which HTTP redirects are followed (the same origin only);
* `~trio_mcp._core.oauth`: MCP authorization (OAuth 2.1), its decisions;
* `~trio_mcp._core.oauth_flow`: the login as a flow of steps over those decisions;
* `~trio_mcp._core.server_cards`: server cards and their catalogs, read and checked.

Groups and apps:

* `~trio_mcp._core.restart`: when a server of a group is started again;
* `~trio_mcp._core.naming`: the names a group gives its servers' tools and prompts;
* `~trio_mcp._core.apps`: the host's rules of MCP Apps;
* `~trio_mcp._core.app_bridge`: the MCP Apps bridge between a host and one view, as a machine.
"""

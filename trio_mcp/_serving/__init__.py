"""The server side of MCP, shared by the servers of this package.

The demo server (`trio_mcp.demo`) and the fake server of `trio_mcp.testing`
differ only in what they offer; how a server reads, decodes, dispatches,
answers and writes is here:

* `~trio_mcp._serving.rules`: what each era says a server answers (the
  handshake of both eras, result marks, log levels), pure, without Trio;
* `~trio_mcp._serving.server`: one connection over a pair of Trio byte
  streams, requests served in tasks, one writer.
"""

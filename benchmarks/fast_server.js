// A fast MCP responder (2026-07-28, plain JSON) for http_bench.py: node fast_server.js [port]
// Answers server/discover, tools/list and tools/call of echo; prints "LISTENING <port>".
"use strict";
const http = require("http");
const V = "2026-07-28";
const info = { name: "fast-echo", version: "1" };
const echo = { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } };
const results = {
  "server/discover": () => ({ resultType: "complete", supportedVersions: [V], capabilities: { tools: {} },
    ttlMs: 0, cacheScope: "public", _meta: { "io.modelcontextprotocol/serverInfo": info } }),
  "tools/list": () => ({ tools: [echo], resultType: "complete", ttlMs: 0, cacheScope: "public" }),
  "tools/call": (p) => ({ content: [{ type: "text", text: p.arguments.text }], resultType: "complete" }),
};
const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const m = JSON.parse(Buffer.concat(chunks));
    const make = results[m.method];
    const answer = make ? { result: make(m.params) } : { error: { code: -32601, message: "no " + m.method } };
    const body = JSON.stringify({ jsonrpc: "2.0", id: m.id, ...answer });
    res.writeHead(make ? 200 : 404, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.headersTimeout = 0; server.requestTimeout = 0;
server.listen(Number(process.argv[2] || 0), "127.0.0.1", () => console.log("LISTENING " + server.address().port));

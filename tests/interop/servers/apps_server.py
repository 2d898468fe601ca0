"""An MCP Apps server on the official Python SDK (``mcp`` 2.3.0, ``mcp.server.apps``), for the interop tests.

Run it with the Python of the peers' virtualenv (the one ``peers.json`` names
for the ``sdk`` peer). Both eras, as the SDK serves them.

* ``show_clock``: a tool with a view (``ui://clock/app.html``), visible to
  the model and to views;
* ``refresh_clock``: for views alone (visibility ``["app"]``);
* ``model_clock``: for the model alone (visibility ``["model"]``);
* ``plain``: a tool without a view;
* ``apps_supported``: says whether the request that called it declared the
  extension with the ``text/html;profile=mcp-app`` MIME type;
* ``legacy_key``: names its view with the deprecated flat ``ui/resourceUri`` key;
* ``not_html``: names ``ui://bad/page.html``, served as plain ``text/html``;
* ``web_page``: names an ``https://`` URI;
* ``ui://clock/app.html`` declares CSP origins (one of them a bare ``*``),
  the camera and clipboard permissions, a dedicated domain and a border.
"""

from __future__ import annotations

from datetime import UTC, datetime

from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import TextResource

CLOCK_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Clock</title></head>
<body style="margin:0">
<p id="time" style="position:absolute;left:10px;top:0;margin:10px 0">--:--</p>
<button id="refresh" style="position:absolute;left:10px;top:50px;width:120px;height:40px">Refresh</button>
<script>
// The view's side of MCP Apps, by hand: JSON-RPC over postMessage to the host.
let next = 1;
const waiting = new Map();
function request(method, params) {
  const id = next++;
  parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
  return new Promise((resolve, reject) => waiting.set(id, {resolve, reject}));
}
function notify(method, params) { parent.postMessage({jsonrpc: "2.0", method, params}, "*"); }
function log(data) { notify("notifications/message", {level: "info", data}); }
function show(text) { document.getElementById("time").textContent = text; }
window.addEventListener("message", (event) => {
  const m = event.data;
  if (!m || typeof m !== "object") return;
  if (m.method === undefined && waiting.has(m.id)) {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error) { w.reject(m.error); } else { w.resolve(m.result); }
  } else if (m.method === "ui/notifications/tool-result") {
    show(m.params.content[0].text);
    log("rendered: " + m.params.content[0].text);
  } else if (m.method === "ui/resource-teardown") {
    parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*");
  }
});
document.getElementById("refresh").addEventListener("click", async () => {
  const result = await request("tools/call", {name: "refresh_clock", arguments: {}});
  show(result.content[0].text);
  log(result.content[0].text);
});
request("ui/initialize", {
  protocolVersion: "2026-01-26", appInfo: {name: "clock", version: "1.0.0"}, appCapabilities: {},
}).then(() => notify("ui/notifications/initialized", {}));
</script>
</body></html>
"""

apps = Apps()


@apps.tool(resource_uri="ui://clock/app.html", description="Show the time in a clock view")
def show_clock() -> str:
    return datetime.now(UTC).isoformat()


@apps.tool(resource_uri="ui://clock/app.html", visibility=["app"], description="Refresh the clock view")
def refresh_clock() -> str:
    return "refreshed at " + datetime.now(UTC).isoformat()


@apps.tool(resource_uri="ui://clock/app.html", visibility=["model"], description="The time, for the model")
def model_clock() -> str:
    return datetime.now(UTC).isoformat()


apps.add_html_resource(
    "ui://clock/app.html",
    CLOCK_HTML,
    name="clock",
    csp=ResourceCsp(
        connect_domains=["wss://time.example.com", "*"],
        resource_domains=["https://cdn.example.com"],
    ),
    permissions=ResourcePermissions(camera={}, clipboard_write={}),
    domain="clock.example-content.com",
    prefers_border=True,
)

server = MCPServer(name="apps-test-server", version="1.0.0", extensions=[apps])


@server.tool(description="A tool without a view")
def plain() -> str:
    return "plain"


@server.tool(description="Whether this call declared MCP Apps")
def apps_supported(ctx: Context) -> str:
    return "yes" if client_supports_apps(ctx) else "no"


@server.tool(
    description="A view named by the deprecated flat key", meta={"ui/resourceUri": "ui://clock/app.html"}
)
def legacy_key() -> str:
    return "legacy"


@server.tool(
    description="A view served with the wrong MIME type", meta={"ui": {"resourceUri": "ui://bad/page.html"}}
)
def not_html() -> str:
    return "bad"


@server.tool(
    description="A view that is not a ui:// resource", meta={"ui": {"resourceUri": "https://example.com/app"}}
)
def web_page() -> str:
    return "web"


server.add_resource(
    TextResource(uri="ui://bad/page.html", name="bad", mime_type="text/html", text="<p>no</p>")
)

if __name__ == "__main__":
    server.run()

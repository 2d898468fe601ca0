import trio

import trio_mcp
from trio_mcp.auth import FileTokenStorage, LoopbackRedirect, OAuth

URL = "http://127.0.0.1:8000/mcp"


async def main() -> None:
    # The logins kept in the user's file store are used first; the browser
    # opens only when none works (or a tool needs more scope).
    auth = OAuth(URL, redirect=LoopbackRedirect(), storage=FileTokenStorage())
    async with trio_mcp.open_client(trio_mcp.HTTPTarget(URL, auth=auth)) as client:
        result = await client.call_tool("echo", {"text": "logged in"})
        print(result.text)


trio.run(main)

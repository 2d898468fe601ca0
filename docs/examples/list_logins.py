import trio

from trio_mcp.auth import FileTokenStorage


async def main() -> None:
    storage = FileTokenStorage()  # the user's file, as trio-mcp login uses it
    for resource, issuer in await storage.resources():
        print(resource, "logged in at", issuer)


trio.run(main)

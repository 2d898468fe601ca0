"""``python -m trio_mcp``: the ``trio-mcp`` command (see `trio_mcp.cli`)."""

from trio_mcp.cli import main

if __name__ == "__main__":
    main()

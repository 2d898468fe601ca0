"""``python -m trio_mcp.demo``: run the demo server on stdin and stdout."""

from . import main

raise SystemExit(main())

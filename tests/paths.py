"""Where the test suite's folders are, for a test file at any depth.

Test files live beside what they test (``tests/_core/test_framing.py`` tests
``trio_mcp/_core/framing.py``), so a test never finds a folder from its own
place (``Path(__file__).parent``): it imports the folder from here, and can
move without breaking.
"""

from __future__ import annotations

from pathlib import Path

#: tests/
TESTS_DIR = Path(__file__).resolve().parent
#: The root of the repository.
REPO_ROOT = TESTS_DIR.parent
#: tests/servers/: the scripted MCP servers the tests run as child processes.
SERVERS_DIR = TESTS_DIR / "servers"

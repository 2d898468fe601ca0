"""Tests of ``trio_mcp._config``."""

"""Tests of ``trio_mcp._trio``."""

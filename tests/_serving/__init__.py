"""Tests of ``trio_mcp._serving``."""

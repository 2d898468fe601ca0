"""Tests of ``trio_mcp._models``."""

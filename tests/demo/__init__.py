"""Tests of ``trio_mcp.demo``."""

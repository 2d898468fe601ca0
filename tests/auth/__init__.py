"""Tests of ``trio_mcp.auth``."""
